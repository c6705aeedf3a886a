package migration

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// The analogue of KIP-848's KAFKA-21582 (issue #41): the first streams
// member arrives while the classic group rebalances. KIP-848's upgrade kept
// the previous generation's target while the classic group was
// PreparingRebalance or CompletingRebalance (a member between its join and
// its sync), and gave a member partitions their classic owner had not
// revoked yet. The takeover reads the group only when it is Stable: in
// either state it gives up for now (the streams member retries on
// COORDINATOR_LOAD_IN_PROGRESS), fences nobody, leaves the group classic
// upstream; once the group is Stable at the next generation it carries that
// generation's assignment, not the one before, and the streams member gets
// no task a classic member holds. Guard: ClassicGroupStateOf's state check
// (with the observer's one-generation check behind it).
func TestTakeoverWaitsForClassicRebalance(t *testing.T) {
	tk, up, gate, c := takeoverFixture(t, nil, MigrationBidirectional)
	// Generation 7 is Stable upstream with a: 0-2, b: 3-5 (the fixture).
	// Member c joins: the broker starts generation 8. a rejoins at once
	// (its JoinGroup passes through), b has not yet.
	stale := up.d.Members
	for _, state := range []string{"PreparingRebalance", "CompletingRebalance"} {
		d := *up.d
		d.State = state
		if state == "CompletingRebalance" {
			// Every member joined generation 8; the leader's
			// SyncGroup has not come: DescribeGroups lists the
			// members with no assignment yet.
			tk.Observer.ObserveGeneration("legacy", "a", 8)
			tk.Observer.ObserveGeneration("legacy", "b", 8)
			tk.Observer.ObserveGeneration("legacy", "c", 8)
			d.Members = nil
			for _, id := range []string{"a", "b", "c"} {
				m := describedMember(t, id)
				m.MemberAssignment = nil
				d.Members = append(d.Members, m)
			}
		} else {
			d.Members = append(stale, describedMember(t, "c"))
		}
		up.d = &d
		r := runTakeover(tk)
		if r.ErrorCode != kerr.CoordinatorLoadInProgress.Code || up.fenced != nil || up.anchored != 0 || c.Owns("legacy") {
			t.Fatalf("%s: code %d %q, fenced %d, anchored %d, owned %v", state, r.ErrorCode, deref(r.ErrorMessage), len(up.fenced), up.anchored, c.Owns("legacy"))
		}
		if gate.released != gate.held {
			t.Fatalf("%s: gate held %d released %d", state, gate.held, gate.released)
		}
	}
	// Generation 8 is Stable: a keeps 0-1, b 3-4, c gets 2 and 5 (each
	// revoked by its classic owner before the leader gave it away).
	d := *up.d
	d.State = "Stable"
	d.Members = []kmsg.DescribeGroupsResponseGroupMember{describedMember(t, "a", 0, 1), describedMember(t, "b", 3, 4), describedMember(t, "c", 2, 5)}
	up.d = &d
	var taken streams.ClassicGroupState
	tk.TakenOver = func(st streams.ClassicGroupState) { taken = st }
	r := runTakeover(tk)
	if r.ErrorCode != 0 || len(r.ActiveTasks) != 0 || !c.Owns("legacy") || taken.Generation != 8 {
		t.Fatalf("takeover at generation 8: code %d %q, s1 tasks %v, owned %v, generation %d", r.ErrorCode, deref(r.ErrorMessage), r.ActiveTasks, c.Owns("legacy"), taken.Generation)
	}
	// The classic members hold generation 8: its commits are accepted,
	// generation 7's are not (the stale target is gone).
	for _, id := range []string{"a", "b", "c"} {
		if err := classicCommitAt(c, id, 8); err != nil {
			t.Fatalf("%s's commit at generation 8: %v", id, err)
		}
	}
	if err := classicCommitAt(c, "a", 7); err == nil {
		t.Fatal("a commit of generation 7 was accepted after a takeover at generation 8")
	}
}

// classicCommitAt is c's verdict on an offset commit of classic member id
// of group legacy at generation gen.
func classicCommitAt(c *coordinator.Coordinator, id string, gen int32) error {
	res := make(chan streams.OffsetCommitResult, 1)
	c.ValidateClassicOffsetCommit(streams.OffsetCommitRequest{GroupID: "legacy", MemberID: id, MemberEpoch: gen}, func(r streams.OffsetCommitResult) { res <- r })
	return (<-res).Err
}
