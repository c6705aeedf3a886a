package capture

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// testdata/online-migration.jsonl.gz is a real run's capture (format 2)
// of TestStreamsProxyOnlineMigration, 2026-12-07 01:09 UTC: classic
// instances c1 (kafka-streams 4.4, process 3f42d097), c2 (2.8, 0b60531d)
// and c3 (3.6, 55dca192) rolled one at a time to 4.4 streams on their
// state directories (s1 s2 s3: the same process ids) and back (c4 c5 c6).
// The group's TxnOffsetCommit, OffsetFetch, StreamsGroupDescribe lines
// and records-written events are left out (the timeline does not read
// them). The apps' own logs of that run: c1 "closing" 01:11:56.062,
// "closed" 01:11:58.045, its tasks 0_0 to c2 (Kafka Streams' "Handle new
// assignment" at 01:12:28.589), 0_3 and 1_1 to c3 (01:12:28.439); c2
// closed 01:13:41.102, its tasks to s2 at 01:13:52.806; c3 closed
// 01:14:08.869, its tasks to s3 at 01:14:24.770.
func recordedOnlineMigration(t *testing.T) *Timeline {
	t.Helper()
	f, err := os.Open("testdata/online-migration.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, problems := ReadLines("online-migration.jsonl.gz", f)
	if len(problems) > 0 || len(lines) == 0 || lines[0].Type != TypeHeader || lines[0].Format != 2 {
		t.Fatalf("%d lines, problems %v, first %+v", len(lines), problems, lines[0])
	}
	return BuildTimeline(lines, "e2e-count")
}

// On the recorded run, each stopped classic instance's tasks stall from
// its connection's close (between its app's "closing" and "closed") until
// another instance took them (within 0.3 s of the apps' "Handle new
// assignment"): c1's 30.4 s (the group still the broker's: its session of
// 30 s ran out), c2's 11.8 s and c3's 16.3 s (replaced by identity when
// their successors, JVMs starting on a loaded machine, joined).
func TestTimelineRecordedStalls(t *testing.T) {
	tl := recordedOnlineMigration(t)
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, want := range []struct {
		instance, why string
		tasks         []string
		closing, took time.Time // the app's closing, and another app's "Handle new assignment"
	}{
		{"3f42d097", goneClosed, []string{"0_0", "0_3", "1_1"}, at("2026-12-07T01:11:56.062Z"), at("2026-12-07T01:12:28.589Z")},
		{"0b60531d", goneClosed, []string{"0_0", "0_2", "1_0"}, at("2026-12-07T01:13:40.914Z"), at("2026-12-07T01:13:52.806Z")},
		{"55dca192", goneClosed, []string{"0_1", "0_3", "1_1"}, at("2026-12-07T01:14:07.603Z"), at("2026-12-07T01:14:24.770Z")},
	} {
		for _, task := range want.tasks {
			i := slices.IndexFunc(tl.Stalls, func(s Stall) bool {
				return s.Task == task && strings.Contains(s.Owner, want.instance) && !s.From.Before(want.closing) && s.From.Sub(want.closing) < 3*time.Second
			})
			if i < 0 {
				t.Errorf("%s task %s: no stall from its stop at %v; stalls %+v", want.instance, task, want.closing, tl.Stalls)
				continue
			}
			s := tl.Stalls[i]
			if s.Why != want.why || s.To.Sub(want.took).Abs() > time.Second {
				t.Errorf("%s task %s: stall %v..%v (%s), want %s until the apps' new assignment at %v", want.instance, task, s.From, s.To, s.Why, want.why, want.took)
			}
		}
	}
	if tl.Overlaps() != 0 {
		t.Errorf("%d times two owners", tl.Overlaps())
	}
	n, _, longest := tl.StallTotals()
	if n != 23 || longest.Round(time.Millisecond) != 30356*time.Millisecond {
		t.Errorf("stalls %d, longest %v; want 23, 30.356s", n, longest)
	}
	var text strings.Builder
	tl.WriteText(&text)
	for _, want := range []string{
		"went 127.0.0.1/3f42d097 at +2m27.404s (connection closed), came 127.0.0.1/3f42d097 at +2m57.101s; tasks with no running owner: 0_0 30.356s, 0_3 30.353s, 1_1 30.353s",
		"went 127.0.0.1/0b60531d at +4m10.501s (connection closed), came 127.0.0.1/0b60531d at +4m22.119s; tasks with no running owner: 0_0 11.806s, 0_2 11.806s, 1_0 11.806s",
		"23 stalls (a task ran nowhere because its owner was gone)",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q", want)
		}
	}
}
