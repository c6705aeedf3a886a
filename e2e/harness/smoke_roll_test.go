package harness

import (
	"slices"
	"testing"
	"time"
)

// The processing tasks of a smoke client follow its processors' init and
// close lines: a task counts from its first processor's init to its last
// processor's close, and two clients processing one task overlap.
func TestSmokeInstanceProcessingTasks(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	a := &smokeInstance{SmokeClient: SmokeClient{Name: "a"}}
	for _, l := range []struct {
		ms   int
		line string
	}{
		{0, "x 2026-01-01T00:00:00Z: REBALANCING -> RUNNING"},
		{10, "[DEV] initializing processor: topic=sum taskId=2_0"},
		{11, "[DEV] initializing processor: topic=cnt taskId=2_0"},
		{12, "[DEV] initializing processor: topic=data taskId=0_1"},
		{500, "Close processor for task 2_0"},
		{501, "offset 0 to 9 -> processed 10"},
		{502, "Close processor for task 2_0"},
		{900, "Close processor for task 0_1"},
	} {
		a.onLineAt(l.line, at(l.ms))
	}
	evs, _ := a.taskEvents()
	var got [][]string
	for _, ev := range evs {
		got = append(got, ev.Active)
	}
	want := [][]string{{"2_0"}, {"0_1", "2_0"}, {"0_1"}, {}}
	if len(got) != len(want) {
		t.Fatalf("task sets %v, want %v", got, want)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("task sets %v, want %v", got, want)
		}
	}
	if st, when := a.lastState(); st != "RUNNING" || !when.Equal(t0) {
		t.Fatalf("state %s at %s", st, when)
	}

	// b takes 2_0 over before a closed its last processor of it: 2 ms on both.
	b := &smokeInstance{SmokeClient: SmokeClient{Name: "b"}}
	b.onLineAt("[DEV] initializing processor: topic=sum taskId=2_0", at(500))
	bevs, _ := b.taskEvents()
	ov := ActiveOverlaps(append(evs, bevs...), nil, at(2000))
	if len(ov) != 1 || ov[0].Task != "2_0" || ov[0].Dur != 2*time.Millisecond {
		t.Fatalf("overlaps %v", ov)
	}
}
