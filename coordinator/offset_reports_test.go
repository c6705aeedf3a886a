package coordinator

import (
	"testing"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// TestClassicOffsetSumsReported: a classic member's JoinGroup keeps the task
// offset sums of its SubscriptionInfo (a running active task's mark, a
// restoring task's changelog sum) and when it sent them, for the status
// page's lag; a streams member that reports no offsets has neither.
func TestClassicOffsetSumsReported(t *testing.T) {
	w, c1 := mixedGroup(t)
	c1.standby = cTasks(0)
	c1.rebalance()
	var reports map[string]streams.OffsetReport
	w.h.c.OffsetReports("g", func(r map[string]streams.OffsetReport) { reports = r })
	r := reports["c1"]
	if !r.At.Equal(w.h.c.Now()) {
		t.Fatalf("c1 reported at %v, want %v", r.At, w.h.c.Now())
	}
	want := map[int32]int64{3: classicstreams.OffsetSumRunningActive, 4: classicstreams.OffsetSumRunningActive, 5: classicstreams.OffsetSumRunningActive, 0: 10}
	got := map[int32]int64{}
	for _, o := range r.ClassicSums {
		if o.SubtopologyID != "0" {
			t.Fatalf("sum %+v of an unknown subtopology", o)
		}
		got[o.Partition] = o.Offset
	}
	if len(got) != len(want) {
		t.Fatalf("sums %+v, want %v", r.ClassicSums, want)
	}
	for p, v := range want {
		if got[p] != v {
			t.Fatalf("sums %+v, want %v", r.ClassicSums, want)
		}
	}
	if s := reports["s1"]; !s.At.IsZero() || s.ClassicSums != nil {
		t.Fatalf("s1 reported %+v without offsets", s)
	}
	var none map[string]streams.OffsetReport
	w.h.c.OffsetReports("nope", func(r map[string]streams.OffsetReport) { none = r })
	if none != nil {
		t.Fatalf("reports of an unknown group: %v", none)
	}
}
