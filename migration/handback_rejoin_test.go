package migration

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/internal/classictest"
)

// The hand-back race behind one address (issue #41, seen in TestACLsExact):
// a classic member's JoinGroup held at the barrier goes upstream without
// streamshift's member id, but the member, connected to another instance,
// sends the same JoinGroup again (its hop ended before the held join's
// answer: COORDINATOR_NOT_AVAILABLE, the client rejoins with the id it
// has). The group is handed back by then, so the join is forwarded; it
// must go without the id too: with it, the broker answers
// UNKNOWN_MEMBER_ID and the member loses a rebalance.
func TestHandBackResentJoinGoesWithoutMemberID(t *testing.T) {
	tr, c, clock, up, gens, barrierUp := handBackFixture(t, 1)
	lastStreamsMemberLeaves(t, tr, c, "cc-id1", gens[0], barrierUp)
	conn := newMemberConn(t)
	tr.Handle(classictest.JoinRequest(t, 9, "cc-id1", "stream"), streams.ClientInfo{ClientID: "cc"}, conn.respond, conn.forward)
	queued(c)
	clock.Advance(streams.DefaultSessionTimeout)
	handedBackUpstream(t, c, up, conn, conn.answer("the held join"))

	again := newMemberConn(t)
	tr.Handle(classictest.JoinRequest(t, 9, "cc-id1", "stream"), streams.ClientInfo{ClientID: "cc"}, again.respond, again.forward)
	j := again.answer("the join sent again")
	again.mu.Lock()
	defer again.mu.Unlock()
	if len(again.forwarded) != 1 || again.forwarded[0].(*kmsg.JoinGroupRequest).MemberID != "" {
		t.Fatalf("the join sent again after the hand-back went upstream as %+v, want no member id", again.forwarded)
	}
	if j.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("the join sent again was answered %v, want MEMBER_ID_REQUIRED", kerr.ErrorForCode(j.ErrorCode))
	}
}
