package translate

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/classictest"
)

// TestForwardJoinKeepsHandedBackIDWhileCoordinatorMoves: a member whose
// JoinGroup a hand-back sent upstream without streamshift's member id sends
// it again, with that id, each time the broker answers a coordinator error
// (its group coordinator moving); each retry must go without the id too, or
// the broker answers UNKNOWN_MEMBER_ID and the member rejoins from scratch
// (the fault run slow-then-coordinator, issue #41). Once the broker answered
// otherwise, the id is forgotten.
func TestForwardJoinKeepsHandedBackIDWhileCoordinatorMoves(t *testing.T) {
	tr, _ := fixture(t)
	const id = "e2e-count-c3-StreamThread-1-consumer-streamshift"
	tr.HandedBack(id, time.Minute)
	send := func(answer int16) (sentID string) {
		t.Helper()
		req := classictest.JoinRequest(t, 9, id, "stream")
		called := false
		tr.ForwardJoin(req, func(rewritten kmsg.Request, answered func(kmsg.Response)) {
			called = true
			sentID = id
			if rewritten != nil {
				sentID = rewritten.(*kmsg.JoinGroupRequest).MemberID
			}
			if answered != nil {
				resp := kmsg.NewPtrJoinGroupResponse()
				resp.ErrorCode = answer
				answered(resp)
			}
		})
		if !called {
			t.Fatal("not forwarded")
		}
		return sentID
	}
	for i, code := range []int16{kerr.CoordinatorNotAvailable.Code, kerr.NotCoordinator.Code, kerr.CoordinatorLoadInProgress.Code, kerr.MemberIDRequired.Code} {
		if got := send(code); got != "" {
			t.Fatalf("join %d (after %d coordinator errors) went upstream with member id %q, want none", i+1, i, got)
		}
	}
	if got := send(0); got != id {
		t.Fatalf("after the broker gave the member an id, its join went with %q, want %q untouched", got, id)
	}
}
