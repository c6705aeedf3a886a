package capture

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// hb is a StreamsGroupHeartbeat exchange of a client answered with tasks
// (nil: no change) at second sec.
func hb(t0 time.Time, sec int, client string, epoch int, tasks map[string][]int) string {
	key := int16(88)
	resp := map[string]any{"memberId": client + "-id", "memberEpoch": epoch, "activeTasks": nil}
	if tasks != nil {
		list := []map[string]any{}
		for st, ps := range tasks {
			list = append(list, map[string]any{"subtopologyId": st, "partitions": ps})
		}
		resp["activeTasks"] = list
	}
	rb, _ := json.Marshal(resp)
	l := Line{Type: "exchange", Wall: t0.Add(time.Duration(sec) * time.Second), ClientID: client, APIKey: &key, APIName: "StreamsGroupHeartbeat",
		Groups: []string{"g"}, Request: json.RawMessage(fmt.Sprintf(`{"groupId":"g","memberId":"%s-id","memberEpoch":%d}`, client, epoch)), Response: rb}
	b, _ := json.Marshal(l)
	return string(b)
}

// TestTimelineOwnership: the per-task ownership of a synthetic capture with
// a known overlap (task 0_0 owned by a and b from +5s to +10s) and a known
// gap (task 0_1 owned by nobody from +3s to +6s) flags both, and nothing
// else; a garbled line is reported with its number and skipped.
func TestTimelineOwnership(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	input := strings.Join([]string{
		hb(t0, 0, "a", 1, map[string][]int{"0": {0, 1}}),
		hb(t0, 3, "a", 2, map[string][]int{"0": {0}}),
		`{"type":"exchange","wall":`, // truncated
		hb(t0, 5, "b", 2, map[string][]int{"0": {0}}),
		hb(t0, 6, "b", 3, map[string][]int{"0": {0, 1}}),
		hb(t0, 8, "b", 3, nil),
		hb(t0, 10, "a", 3, map[string][]int{}),
		hb(t0, 12, "b", 3, nil),
	}, "\n")
	lines, problems := ReadLines("synthetic.jsonl", strings.NewReader(input))
	if len(problems) != 1 || !strings.HasPrefix(problems[0], "synthetic.jsonl:3:") {
		t.Fatalf("problems %v, want line 3 reported", problems)
	}
	tl := BuildTimeline(lines, "g")
	byTask := map[string]*TaskHistory{}
	for _, th := range tl.Tasks {
		byTask[th.Task] = th
	}
	sec := func(at time.Time) int { return int(at.Sub(t0) / time.Second) }
	t00, t01 := byTask["0_0"], byTask["0_1"]
	if t00 == nil || t01 == nil {
		t.Fatalf("tasks %+v", tl.Tasks)
	}
	if len(t00.Overlaps) != 1 || sec(t00.Overlaps[0].From) != 5 || sec(t00.Overlaps[0].To) != 10 || t00.Overlaps[0].Lane != "a,b" {
		t.Errorf("0_0 overlaps %+v, want a,b from +5s to +10s", t00.Overlaps)
	}
	if len(t00.Gaps) != 0 || len(t01.Overlaps) != 0 {
		t.Errorf("0_0 gaps %+v, 0_1 overlaps %+v: want none", t00.Gaps, t01.Overlaps)
	}
	if len(t01.Gaps) != 1 || sec(t01.Gaps[0].From) != 3 || sec(t01.Gaps[0].To) != 6 {
		t.Errorf("0_1 gaps %+v, want +3s to +6s", t01.Gaps)
	}
	if tl.Overlaps() != 1 {
		t.Errorf("%d overlaps", tl.Overlaps())
	}
	var text, page strings.Builder
	tl.WriteText(&text)
	if !strings.Contains(text.String(), "TWO OWNERS +5s..+10s") || !strings.Contains(text.String(), "NO OWNER +3s..+6s") {
		t.Errorf("text report does not flag them:\n%s", text.String())
	}
	if err := tl.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-member="a"`, `data-task="0_1"`, `class="z overlap"`, `class="z gap"`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page.String(), "src=") || strings.Contains(page.String(), "href=\"http") || strings.Contains(page.String(), "@import") {
		t.Error("the page must not fetch anything")
	}
}

// bump is a group-epoch-bumped event line at second sec.
func bump(t0 time.Time, sec int) string {
	b, _ := json.Marshal(Line{Type: "event", Wall: t0.Add(time.Duration(sec) * time.Second), Event: streams.EventGroupEpochBumped, Group: "g"})
	return string(b)
}

// TestTimelineRebalanceGap: a task with no owner between its revocation
// and its assignment in a rebalance (revoke-then-assign) is reported as the
// rebalance's and not flagged; one taken from its owner with no rebalance
// since the owner got it is flagged; so is one left without an owner at the
// capture's end.
func TestTimelineRebalanceGap(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	input := strings.Join([]string{
		hb(t0, 0, "a", 1, map[string][]int{"0": {0, 1, 2}}),
		bump(t0, 1), // b joins: the rebalance that moves 0_1 to b
		hb(t0, 2, "a", 1, map[string][]int{"0": {0, 2}}),
		bump(t0, 3), // the bump of b's assignment: it gave b the task, did not move it
		hb(t0, 3, "b", 2, map[string][]int{"0": {1}}),
		hb(t0, 5, "b", 2, map[string][]int{}), // 0_1 taken from b, no rebalance since b got it
		hb(t0, 7, "a", 2, map[string][]int{"0": {0, 1, 2}}),
		hb(t0, 8, "a", 2, map[string][]int{"0": {1, 2}}), // 0_0 dropped for good
		bump(t0, 9), // after the gaps: no rebalance of theirs
		hb(t0, 9, "b", 2, nil),
	}, "\n")
	lines, _ := ReadLines("synthetic.jsonl", strings.NewReader(input))
	tl := BuildTimeline(lines, "g")
	got := map[string][]Gap{}
	for _, th := range tl.Tasks {
		got[th.Task] = th.Gaps
	}
	sec := func(at time.Time) int { return int(at.Sub(t0) / time.Second) }
	if g := got["0_1"]; len(g) != 2 || !g[0].Rebalance || sec(g[0].From) != 2 || sec(g[0].To) != 3 || g[1].Rebalance || sec(g[1].From) != 5 || sec(g[1].To) != 7 {
		t.Errorf("0_1 gaps %+v, want one of the rebalance, +2s..+3s, and one flagged, +5s..+7s", g)
	}
	if g := got["0_2"]; len(g) != 0 {
		t.Errorf("0_2 gaps %+v, want none", g)
	}
	if g := got["0_0"]; len(g) != 1 || g[0].Rebalance || !g[0].AtEnd {
		t.Errorf("0_0 gaps %+v, want one flagged at the capture's end", g)
	}
	if tl.Gaps() != 2 {
		t.Errorf("%d flagged gaps, want 2", tl.Gaps())
	}
	var text strings.Builder
	tl.WriteText(&text)
	for _, want := range []string{"no owner +2s..+3s (1s) while a rebalance moved it", "!  NO OWNER +5s..+7s (2s) with no rebalance going on", "!  NO OWNER +8s..+9s (1s) at the capture's end"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
}

// syncGroup is a classic SyncGroup exchange of a client at generation gen
// answered with active tasks of subtopology 0, at second sec.
func syncGroup(t0 time.Time, sec int, client string, gen int, tasks ...int) string {
	key := int16(14)
	var active []string
	for _, p := range tasks {
		active = append(active, fmt.Sprintf("0_%d", p))
	}
	rb, _ := json.Marshal(map[string]any{"assignmentDecoded": map[string]any{"assignmentInfo": map[string]any{"activeTasks": active}}})
	l := Line{Type: "exchange", Wall: t0.Add(time.Duration(sec) * time.Second), ClientID: client, APIKey: &key, APIName: "SyncGroup",
		Groups: []string{"g"}, Request: json.RawMessage(fmt.Sprintf(`{"groupId":"g","memberId":"%s-id","generationId":%d}`, client, gen)), Response: rb}
	b, _ := json.Marshal(l)
	return string(b)
}

// TestTimelineUpstreamGenerationSupersedes: on the broker's classic group a
// member stopped for good (its session ran out, it sends nothing more)
// owned its tasks on the timeline until the end, so the generation that gave
// them to the others showed two owners (seen in e2e runs whose successor
// started after the stopped member's session). A newer upstream generation's
// assignment ends an older generation's ownership of the same tasks; inside
// the served group (after a takeover) the same sequence is still flagged.
func TestTimelineUpstreamGenerationSupersedes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	upstream := []string{
		syncGroup(t0, 0, "a", 5, 0, 1),
		syncGroup(t0, 0, "b", 5, 2, 3),
		// a stops; its session runs out upstream; generation 6 without it
		syncGroup(t0, 40, "b", 6, 0, 1, 2, 3),
		syncGroup(t0, 50, "b", 6),
	}
	tl := BuildTimeline(readSynthetic(t, upstream), "g")
	if n := tl.Overlaps(); n != 0 {
		t.Errorf("upstream: %d overlaps, want none (generation 6 superseded a's generation 5)", n)
	}
	takeover, _ := json.Marshal(Line{Type: "event", Wall: t0.Add(-time.Second), Event: "takeover-done", Group: "g"})
	tl = BuildTimeline(readSynthetic(t, append([]string{string(takeover)}, upstream...)), "g")
	if n := tl.Overlaps(); n == 0 {
		t.Error("served group: a task given to b while a still owns it is not flagged")
	}
}

func readSynthetic(t *testing.T, lines []string) []Line {
	t.Helper()
	out, problems := ReadLines("synthetic.jsonl", strings.NewReader(strings.Join(lines, "\n")))
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	return out
}
