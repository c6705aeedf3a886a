package migration

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
)

// onRecovery runs f with the group's recovery on its queue, and waits.
func onRecovery(c *coordinator.Coordinator, group string, f func(*coordinator.RestartRecovery) *coordinator.RestartRecovery) {
	done := make(chan struct{})
	c.WithRecovery(group, func(g *coordinator.RestartRecovery) *coordinator.RestartRecovery {
		defer close(done)
		return f(g)
	}, func() { close(done) })
	<-done
}

// joinVerdictOf is r's verdict on req, waited for.
func joinVerdictOf(r *Recovery, req *kmsg.JoinGroupRequest, h RecoveryJoin) JoinVerdict {
	v := make(chan JoinVerdict, 1)
	r.Join(req, h, func(verdict JoinVerdict, _ *kmsg.JoinGroupRequest) { v <- verdict })
	return <-v
}

// TestRecoveryHoldsOneJoinPerLiveConnection: a client that joins, drops its
// connection and joins again, over and over, while its group recovers holds
// one join, not one per connection (memory stays bounded).
func TestRecoveryHoldsOneJoinPerLiveConnection(t *testing.T) {
	c := coordinatorOn(t, coordinator.NewManualClock(time.Unix(0, 0)))
	r := newRecovery(&Migration{c: c}, 10*time.Second)
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group = "legacy"
	if v := joinVerdictOf(r, req, RecoveryJoin{}); v != JoinForward || r.Recovering("legacy") {
		t.Fatalf("join of a group without a recovery: verdict %d, want forwarded", v)
	}
	onRecovery(c, "legacy", func(*coordinator.RestartRecovery) *coordinator.RestartRecovery {
		return &coordinator.RestartRecovery{Stale: map[string]bool{}}
	})
	if !r.Recovering("legacy") {
		t.Fatal("a group with a recovery is not recovering")
	}
	for i := 0; i < 1000; i++ {
		done := make(chan struct{})
		if v := joinVerdictOf(r, req, RecoveryJoin{Done: done, Rerun: func() {}}); v != JoinHeld {
			t.Fatalf("join %d of a recovering group: verdict %d, want held", i, v)
		}
		close(done)
	}
	live := make(chan struct{})
	joinVerdictOf(r, req, RecoveryJoin{Done: live, Rerun: func() {}})
	var n int
	onRecovery(c, "legacy", func(g *coordinator.RestartRecovery) *coordinator.RestartRecovery {
		n = len(g.Held)
		return g
	})
	if n != 1 {
		t.Fatalf("%d joins held, want the one of the live connection", n)
	}
}
