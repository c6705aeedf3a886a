package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hbFull is a StreamsGroupHeartbeat of client at second sec with epoch in
// the request, answered with active and warm-up tasks of subtopology 0
// (nil: no change).
func hbFull(t0 time.Time, sec int, client string, epoch int, active, warmup []int) string {
	key := int16(88)
	resp := map[string]any{"memberId": client + "-id", "memberEpoch": max(epoch, 1), "activeTasks": nil, "warmupTasks": nil}
	if active != nil {
		resp["activeTasks"] = []map[string]any{{"subtopologyId": "0", "partitions": active}}
	}
	if warmup != nil {
		resp["warmupTasks"] = []map[string]any{{"subtopologyId": "0", "partitions": warmup}}
	}
	rb, _ := json.Marshal(resp)
	l := Line{Type: "exchange", Wall: t0.Add(time.Duration(sec) * time.Second), ClientID: client, APIKey: &key, APIName: "StreamsGroupHeartbeat",
		Groups: []string{"g"}, Request: json.RawMessage(fmt.Sprintf(`{"groupId":"g","memberId":"%s-id","memberEpoch":%d}`, client, epoch)), Response: rb}
	b, _ := json.Marshal(l)
	return string(b)
}

// laneTimeline: a keeps 0_0 throughout (assigned again at +4s: no owner
// change), b owns 0_1, leaves at +2s (epoch -1), is away until it joins
// again at +8s and gets 0_1 back; from +9s c warms up 0_1's copy.
func laneTimeline(t *testing.T) (*Timeline, time.Time) {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	input := strings.Join([]string{
		hbFull(t0, 0, "a", 1, []int{0}, nil),
		hbFull(t0, 0, "b", 1, []int{1}, nil),
		hbFull(t0, 2, "b", -1, nil, nil),
		hbFull(t0, 3, "a", 2, []int{0, 1}, nil),
		hbFull(t0, 4, "a", 3, []int{0}, nil),
		hbFull(t0, 8, "b", 0, []int{1}, nil),
		hbFull(t0, 9, "c", 0, []int{}, []int{1}),
		hbFull(t0, 12, "a", 3, nil, nil),
	}, "\n")
	lines, problems := ReadLines("synthetic.jsonl", strings.NewReader(input))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return BuildTimeline(lines, "g"), t0
}

// TestTimelineOwnerChanges: a task that never went to another member has no
// owner change, whatever its owner spans; one that moved counts its moves.
func TestTimelineOwnerChanges(t *testing.T) {
	tl, _ := laneTimeline(t)
	var text strings.Builder
	tl.WriteText(&text)
	// 0_0: a all along. 0_1: b, a, b again.
	for _, want := range []string{"0_0: 0 owner changes", "0_1: 2 owner changes"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// TestTimelineAway: a member's time out of the group is its own span, and
// its protocol's band is not drawn over it.
func TestTimelineAway(t *testing.T) {
	tl, t0 := laneTimeline(t)
	sec := func(at time.Time) int { return int(at.Sub(t0) / time.Second) }
	var b *Lane
	for _, ln := range tl.Lanes {
		if ln.ClientID == "b" {
			b = ln
		}
	}
	if b == nil || len(b.Away) != 1 || sec(b.Away[0].From) != 2 || sec(b.Away[0].To) != 8 {
		t.Fatalf("b away %+v, want +2s..+8s", b)
	}
	v := tl.view()
	span := float64(tl.End.Sub(tl.Start))
	for _, hl := range v.Lanes {
		if hl.Name != "b" {
			continue
		}
		var away bool
		for _, s := range hl.Shapes {
			from, to := s.F0*span/float64(time.Second), s.F1*span/float64(time.Second)
			if strings.HasPrefix(s.Class, "proto") && from < 8-1e-9 && to > 2+1e-9 {
				t.Errorf("b's %s band %.1fs..%.1fs covers its time away", s.Class, from, to)
			}
			away = away || s.Class == "away"
		}
		if !away {
			t.Error("b's lane draws no away span")
		}
	}
	var text strings.Builder
	tl.WriteText(&text)
	if !strings.Contains(text.String(), "away +2s..+8s (6s)") {
		t.Errorf("text lacks b's time away:\n%s", text.String())
	}
}

// TestTimelineWarmups: warm-up tasks a heartbeat gives are drawn in the
// member's lane and listed in the text.
func TestTimelineWarmups(t *testing.T) {
	tl, _ := laneTimeline(t)
	var page, text strings.Builder
	if err := tl.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `class="z warmup"`) || !strings.Contains(page.String(), "warmup 0_1") {
		t.Error("the page draws no warm-up")
	}
	tl.WriteText(&text)
	if !strings.Contains(text.String(), "+9s warms up [0_1]") {
		t.Errorf("text lacks c's warm-up:\n%s", text.String())
	}
}

// TestTimelinePageFits1400: the page, in headless Chromium with a 1400 px
// wide window, is no wider than the window, and at zoom 1 its whole time
// axis is in view (no scrolling sideways to see the end: the axis fills what
// the labels leave; zooming in scrolls). A script added after the page's
// own writes the widths into the title, which --dump-dom shows.
func TestTimelinePageFits1400(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is required under CI: %v", err)
		}
		t.Skipf("chromium not installed: %v", err)
	}
	tl, _ := laneTimeline(t)
	var page strings.Builder
	if err := tl.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	html := strings.Replace(page.String(), "</body>", "<script>var s=document.getElementById('scroll');document.title='width='+document.documentElement.scrollWidth+' hidden='+(s.scrollWidth-s.clientWidth)</script></body>", 1)
	file := filepath.Join(t.TempDir(), "timeline.html")
	if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dom, err := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1400,900", "--dump-dom", "file://"+file).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	m := regexp.MustCompile(`<title>width=(\d+) hidden=(-?\d+)</title>`).FindStringSubmatch(string(dom))
	if m == nil {
		t.Fatalf("no width in the DOM:\n%.500s", dom)
	}
	if w, _ := strconv.Atoi(m[1]); w > 1400 {
		t.Errorf("the page is %d px wide in a 1400 px window", w)
	}
	if hidden, _ := strconv.Atoi(m[2]); hidden > 0 {
		t.Errorf("at zoom 1, %d px of the time axis are out of view", hidden)
	}
}
