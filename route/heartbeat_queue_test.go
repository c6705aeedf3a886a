package route

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
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
