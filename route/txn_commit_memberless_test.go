package route

import (
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTxnOffsetCommitWhileAnchorJoins: while the group's anchor is not a
// member upstream (its JoinGroup answered COORDINATOR_NOT_AVAILABLE, as
// under a coordinator move, and during a takeover until it joins), a
// member's TxnOffsetCommit is validated here and forwarded at once without
// a member (member id "", generation -1, no instance id), which Kafka
// accepts for a transactional commit: it does not wait for the anchor
// (AnchorWait, 20 s: past Kafka Streams' 10 s transaction.timeout.ms under
// exactly-once), and the offset lands. A stale epoch is still refused
// here: zombie fencing is streamshift's validation either way.
func TestTxnOffsetCommitWhileAnchorJoins(t *testing.T) {
	e := newEnv(t, direct)
	epoch := e.joinAndAssign("app", "m1")
	gen, err := e.anchors.Generation(e.ctx, "app")
	if err != nil {
		t.Fatal(err)
	}

	// The coordinator moving: every JoinGroup of the group refused.
	e.cluster.ControlKey(int16(kmsg.JoinGroup), func(kmsg.Request) (kmsg.Response, error, bool) {
		e.cluster.KeepControl()
		resp := kmsg.NewPtrJoinGroupResponse()
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp, nil, true
	})
	var mu sync.Mutex
	var forwarded []kmsg.TxnOffsetCommitRequest
	e.cluster.ControlKey(int16(kmsg.TxnOffsetCommit), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		e.cluster.KeepControl()
		mu.Lock()
		forwarded = append(forwarded, *kr.(*kmsg.TxnOffsetCommitRequest))
		mu.Unlock()
		return nil, nil, false
	})
	e.anchors.Fenced("app", gen) // the anchor rejoins, and cannot
	if _, ok := e.anchors.Current("app"); ok {
		t.Fatal("the anchor is still synced after Fenced")
	}

	start := time.Now()
	txnCommit(t, e, epoch, 88)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the transactional commit took %v: it waited for the anchor", took)
	}
	if got := e.upstreamOffset("app", 1); got != 88 {
		t.Fatalf("upstream offset after the transaction %d, want 88", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(forwarded) != 1 {
		t.Fatalf("%d TxnOffsetCommits reached the upstream, want 1 (the stale one refused here)", len(forwarded))
	}
	if f := forwarded[0]; f.MemberID != "" || f.Generation != -1 || f.InstanceID != nil {
		t.Fatalf("forwarded as member %q generation %d instance %v, want no member", f.MemberID, f.Generation, f.InstanceID)
	}
}
