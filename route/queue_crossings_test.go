package route

import (
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/migration"
)

// TestSteadyHeartbeatCrossesGroupQueueOnce: a steady member's heartbeat
// through the proxy queues one work on its group's executor, as Kafka's
// operation decides ownership and UNKNOWN_MEMBER_ID inside itself. (Before:
// two, Coordinator.Owns and then the heartbeat.) Heartbeats of a group the
// coordinator does not hold are still answered as before: UNKNOWN_MEMBER_ID
// for a member heartbeat, Kafka's leave answer for a leave.
func TestSteadyHeartbeatCrossesGroupQueueOnce(t *testing.T) {
	e := newEnv(t)
	// No internal topics: no creation result is queued meanwhile.
	epoch := e.joinAndAssign("app", "m-1")
	hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	hb.Group, hb.MemberID = "app", "m-1"
	// A steady group arms no timer that fires within seconds (its
	// sessions last 45 s): what is queued meanwhile is the heartbeats'.
	const n = 10
	before := e.coord.QueuedWork()
	for range n {
		hb.MemberEpoch = epoch
		r, err := hb.RequestWith(e.ctx, e.broker)
		if err != nil || r.ErrorCode != 0 || len(r.Status) != 0 {
			t.Fatalf("steady heartbeat: %v %+v", err, r)
		}
		epoch = r.MemberEpoch
	}
	if got := e.coord.QueuedWork() - before; got != n {
		t.Fatalf("%d steady heartbeats queued %d works on the group's executor, want %d (one each)", n, got, n)
	}

	lost := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	lost.Group, lost.MemberID, lost.MemberEpoch = "gone", "m-1", 7
	r, err := lost.RequestWith(e.ctx, e.broker)
	if err != nil || r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("member heartbeat of a group not held: %v %+v, want UNKNOWN_MEMBER_ID", err, r)
	}
	lost.MemberEpoch = -1
	r, err = lost.RequestWith(e.ctx, e.broker)
	if err != nil || r.ErrorCode != 0 || r.MemberID != "m-1" || r.MemberEpoch != -1 {
		t.Fatalf("leave of a group not held: %v %+v, want the leave answer", err, r)
	}
	if e.coord.Owns("gone") {
		t.Fatal("heartbeats of a group not held created it")
	}
}

// TestJoinWithMigrationCrossesGroupQueueOnce: with the online migration on,
// a streams member joining (epoch 0) a group the coordinator holds queues
// one work on the group's executor: the heartbeat itself decides that the
// group is served here, and only a join it does not serve goes on to the
// takeover check. (Before: two, MaybeTakeOver asking Ownership.Owns, then
// the heartbeat.) A join of a group not held is still served: the group is
// created (no live classic group upstream: no takeover).
func TestJoinWithMigrationCrossesGroupQueueOnce(t *testing.T) {
	e := newEnv(t, withMigration(migration.MigrationBidirectional))
	e.joinAndAssign("app", "m-1")
	const n = 3
	before := e.coord.QueuedWork()
	for i := range n {
		r, err := join("app", "m-"+strconv.Itoa(2+i)).RequestWith(e.ctx, e.broker)
		if err != nil || r.ErrorCode != 0 || r.MemberEpoch <= 0 {
			t.Fatalf("join of a held group: %v %+v", err, r)
		}
	}
	if got := e.coord.QueuedWork() - before; got != n {
		t.Fatalf("%d joins of a held group queued %d works on the group's executor, want %d (one each)", n, got, n)
	}

	r, err := join("new", "m-1").RequestWith(e.ctx, e.coordinatorOf("new", e.cl))
	if err != nil || r.ErrorCode != 0 || r.MemberEpoch <= 0 {
		t.Fatalf("join of a group not held: %v %+v", err, r)
	}
	if !e.coord.Owns("new") {
		t.Fatal("the join of a group not held did not create it")
	}
}

// TestOwnedGroupOffsetsCrossGroupQueueOnce: a member's OffsetCommit and its
// OffsetFetch v9 (member fields set) of an owned group each queue one work
// on the group's executor: the validation decides whether the group is
// served here (GROUP_ID_NOT_FOUND: forwarded). (Before: the commit two,
// Ownership.Owns then the validation; the fetch three.) A commit of a
// group the proxy does not serve still goes upstream as it is, queueing
// nothing.
func TestOwnedGroupOffsetsCrossGroupQueueOnce(t *testing.T) {
	e := newEnv(t)
	epoch := e.joinAndAssign("app", "m-1")
	if err := e.commit("app", "m-1", epoch, 1); err != nil { // the anchor joins
		t.Fatal(err)
	}
	const n = 5
	before := e.coord.QueuedWork()
	for i := range n {
		if err := e.commit("app", "m-1", epoch, int64(2+i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.coord.QueuedWork() - before; got != n {
		t.Fatalf("%d commits queued %d works on the group's executor, want %d (one each)", n, got, n)
	}
	if got := e.upstreamOffset("app", 0); got != n+1 {
		t.Fatalf("upstream offset %d, want %d", got, n+1)
	}

	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Version = 9
	g := kmsg.NewOffsetFetchRequestGroup()
	member := "m-1"
	g.Group, g.MemberID, g.MemberEpoch = "app", &member, epoch
	fetch.Groups = []kmsg.OffsetFetchRequestGroup{g}
	before = e.coord.QueuedWork()
	fr, err := fetch.RequestWith(e.ctx, e.broker)
	if err != nil || len(fr.Groups) != 1 || fr.Groups[0].ErrorCode != 0 {
		t.Fatalf("fetch: %v %+v", err, fr)
	}
	if got := e.coord.QueuedWork() - before; got != 1 {
		t.Fatalf("an OffsetFetch of the member queued %d works on the group's executor, want 1", got)
	}

	before = e.coord.QueuedWork()
	if err := e.commit("classic", "", -1, 3); err != nil {
		t.Fatal(err)
	}
	if got := e.coord.QueuedWork() - before; got != 0 {
		t.Fatalf("a commit of a group not served here queued %d works, want 0", got)
	}
	if got := e.upstreamOffset("classic", 0); got != 3 {
		t.Fatalf("the commit of a group not served here: upstream offset %d, want 3", got)
	}
}

// TestDeleteGroupsCrossesGroupQueueOnce: DeleteGroups asks each group's
// queue whether it is held once (Owns), then deletes: two works for a held
// group (three before: Owns was asked again after the DELETE probe). A
// group with a live member is refused NON_EMPTY_GROUP, as Kafka refuses it.
func TestDeleteGroupsCrossesGroupQueueOnce(t *testing.T) {
	e := newEnv(t)
	e.joinAndAssign("app", "m-1")
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version = 2
	del.Groups = []string{"app"}
	before := e.coord.QueuedWork()
	r, err := del.RequestWith(e.ctx, e.broker)
	if err != nil || len(r.Groups) != 1 {
		t.Fatalf("delete: %v %+v", err, r)
	}
	if r.Groups[0].ErrorCode != kerr.NonEmptyGroup.Code {
		t.Fatalf("deleting a group with a live member: %v, want NON_EMPTY_GROUP", kerr.ErrorForCode(r.Groups[0].ErrorCode))
	}
	if got := e.coord.QueuedWork() - before; got != 2 {
		t.Fatalf("a DeleteGroups of a held group queued %d works on its executor, want 2 (Owns once, then the delete)", got)
	}
}
