package migration

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// What a handed-back group's settle needs of the forwarded classic answers
// (coordinator/handback_settle.go): a JoinGroup answered without error is
// a join of its generation, the leader's answer lists the generation's
// members; a SyncGroup answered without error is an assignment; a
// Heartbeat or a failed SyncGroup is neither.
func TestAnswersShowJoinsAndSyncs(t *testing.T) {
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 9, "app", 45000, 300000
	answer := func(member string, members ...string) *kmsg.JoinGroupResponse {
		r := kmsg.NewPtrJoinGroupResponse()
		r.MemberID, r.LeaderID, r.Generation = member, "a", 4
		for _, m := range members {
			r.Members = append(r.Members, kmsg.JoinGroupResponseMember{MemberID: m})
		}
		return r
	}
	_, ob, ok := answerObservation(join, answer("a", "a", "b"))
	if !ok || !ob.Joined || ob.Synced || ob.Generation != 4 || !slices.Equal(ob.GenerationMembers, []string{"a", "b"}) {
		t.Fatalf("leader's join: ok %v %+v", ok, ob)
	}
	if _, ob, ok = answerObservation(join, answer("b")); !ok || !ob.Joined || ob.GenerationMembers != nil {
		t.Fatalf("follower's join: ok %v %+v", ok, ob)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = "app", "b", 4
	if _, ob, ok = answerObservation(sync, kmsg.NewPtrSyncGroupResponse()); !ok || !ob.Synced || ob.Joined || ob.Member != "b" || ob.Generation != 4 {
		t.Fatalf("sync: ok %v %+v", ok, ob)
	}
	failed := kmsg.NewPtrSyncGroupResponse()
	failed.ErrorCode = kerr.RebalanceInProgress.Code
	if _, ob, ok = answerObservation(sync, failed); ok || ob.Synced {
		t.Fatalf("failed sync: ok %v %+v", ok, ob)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = "app", "b", 4
	if _, ob, ok = answerObservation(hb, kmsg.NewPtrHeartbeatResponse()); !ok || ob.Synced || ob.Joined {
		t.Fatalf("heartbeat: ok %v %+v", ok, ob)
	}
}
