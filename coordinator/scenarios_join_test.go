package coordinator

import (
	"slices"
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// §11.1: a new group with no initial delay assigns at once.
func TestScenario01NewGroupAssignsAtOnce(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	resp := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	if resp.MemberEpoch != 2 {
		t.Fatalf("member epoch %d, want 2", resp.MemberEpoch)
	}
	got, ok := assigned(resp)
	if !ok || !streams.TasksEqual(got.Active, tasks("0", 0, 1, 2, 3, 4, 5)) || len(got.Standby) != 0 {
		t.Fatalf("assigned %+v", got)
	}
	if len(resp.Status) != 0 || resp.Status == nil {
		t.Fatalf("status %+v, want empty non-null", resp.Status)
	}
	want := []string{"19:m1", "23:", "17:", "21:m1", "20:", "22:m1"}
	if got := recordTypes(h.log.last()); !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	g := h.group("g")
	if g.GroupEpoch != 2 || g.AssignmentEpoch != 2 || g.State() != streams.GroupStable {
		t.Fatalf("group epoch %d assignment %d state %v", g.GroupEpoch, g.AssignmentEpoch, g.State())
	}
	if resp.HeartbeatIntervalMillis != 5000 || resp.TaskOffsetIntervalMillis != 60000 || resp.AcceptableRecoveryLag != 10000 {
		t.Fatalf("intervals %d %d %d", resp.HeartbeatIntervalMillis, resp.TaskOffsetIntervalMillis, resp.AcceptableRecoveryLag)
	}
}

// §11.2: the initial rebalance delay gives the first members epoch 1 and no
// tasks; after it, the next heartbeat gets the assignment.
func TestScenario02InitialRebalanceDelay(t *testing.T) {
	h := newHarness(t, func(c *streams.Config) { c.Defaults.InitialRebalanceDelay = 3 * time.Second })
	h.md.SetTopic("foo", 6)
	resp := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	got, _ := assigned(resp)
	if resp.MemberEpoch != 1 || !got.IsEmpty() || !slices.Equal(statusCodes(resp), []int8{streams.StatusAssignmentDelayed}) {
		t.Fatalf("epoch %d tasks %+v status %v", resp.MemberEpoch, got, statusCodes(resp))
	}
	want := []string{"19:m1", "23:", "17:", "22:m1"}
	if got := recordTypes(h.log.last()); !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	resp = h.ok(joinReq("g", "m2", "p2", sourceTopology("foo")))
	if resp.MemberEpoch != 1 || !slices.Equal(statusCodes(resp), []int8{streams.StatusAssignmentDelayed}) {
		t.Fatalf("second member: epoch %d status %v", resp.MemberEpoch, statusCodes(resp))
	}
	if h.group("g").State() != streams.GroupAssigning {
		t.Fatalf("state %v", h.group("g").State())
	}
	h.advance(3 * time.Second)
	g := h.group("g")
	if g.AssignmentEpoch != 3 || g.GroupEpoch != 3 {
		t.Fatalf("after delay: group %d assignment %d", g.GroupEpoch, g.AssignmentEpoch)
	}
	resp = h.ok(hbReq("g", "m1", 1, nil))
	got, _ = assigned(resp)
	if resp.MemberEpoch != 3 || streams.TasksCount(got.Active) != 3 || len(resp.Status) != 0 {
		t.Fatalf("after delay: epoch %d tasks %+v status %v", resp.MemberEpoch, got, statusCodes(resp))
	}
}

// §11.3: within the assignment interval the target is not recomputed; the
// first heartbeat after it is.
func TestScenario03AssignmentInterval(t *testing.T) {
	h := newHarness(t, func(c *streams.Config) { c.Defaults.AssignmentInterval = time.Second })
	h.md.SetTopic("foo", 4)
	r1 := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	if r1.MemberEpoch != 2 {
		t.Fatalf("epoch %d", r1.MemberEpoch)
	}
	h.advance(300 * time.Millisecond)
	r2 := h.ok(joinReq("g", "m2", "p2", sourceTopology("foo")))
	if !slices.Equal(statusCodes(r2), []int8{streams.StatusAssignmentDelayed}) || r2.MemberEpoch != 2 {
		t.Fatalf("inside interval: epoch %d status %v", r2.MemberEpoch, statusCodes(r2))
	}
	if got, _ := assigned(r2); !got.IsEmpty() {
		t.Fatalf("inside interval m2 got %+v", got)
	}
	h.advance(600 * time.Millisecond)
	r2 = h.ok(hbReq("g", "m2", 2, &streams.TaskSets{}))
	if !slices.Equal(statusCodes(r2), []int8{streams.StatusAssignmentDelayed}) {
		t.Fatalf("still inside: status %v", statusCodes(r2))
	}
	// The interval ends at 1s: its timer computes the target.
	h.advance(100 * time.Millisecond)
	if g := h.group("g"); g.AssignmentEpoch != 3 {
		t.Fatalf("assignment epoch %d after the interval", g.AssignmentEpoch)
	}
	r2 = h.ok(hbReq("g", "m2", 2, &streams.TaskSets{}))
	if len(r2.Status) != 0 {
		t.Fatalf("after interval: status %v", statusCodes(r2))
	}
}
