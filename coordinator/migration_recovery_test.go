package coordinator

import (
	"testing"
	"time"
)

// A group's restart recovery on its executor (migration_recovery.go), in
// virtual time. What it does is package migration's (recovery.go).

// withRecovery runs f as WithRecovery's and waits for it.
func withRecovery(t *testing.T, c *Coordinator, group string, f func(*RestartRecovery) *RestartRecovery) {
	t.Helper()
	done := make(chan struct{})
	c.WithRecovery(group, func(r *RestartRecovery) *RestartRecovery { defer close(done); return f(r) }, func() { close(done) })
	waitClosed(t, done, "a recovery work of the group's queue")
}

// TestRecoveryGateBit: whether a group has a recovery is read off its
// queue (HasRecovery, the gate word), set and cleared with the state; its
// timer runs on the coordinator's clock and only for the recovery it was
// armed for; a group without one keeps no queue.
func TestRecoveryGateBit(t *testing.T) {
	c, clock := gateOnClock(t)
	if c.HasRecovery("legacy") {
		t.Fatal("a group never seen has a recovery")
	}
	fired := 0
	var first *RestartRecovery
	withRecovery(t, c, "legacy", func(r *RestartRecovery) *RestartRecovery {
		first = &RestartRecovery{Stale: map[string]bool{}}
		c.ArmRecovery("legacy", first, 10*time.Second, func(r *RestartRecovery) *RestartRecovery { fired++; return r })
		return first
	})
	if !c.HasRecovery("legacy") {
		t.Fatal("a group with a recovery: HasRecovery false")
	}
	clock.Advance(5 * time.Second)
	// A new recovery replaces the first: the first's timer is stopped.
	withRecovery(t, c, "legacy", func(r *RestartRecovery) *RestartRecovery {
		if r != first {
			t.Errorf("WithRecovery saw %p, want the first recovery %p", r, first)
		}
		next := &RestartRecovery{Stale: map[string]bool{}}
		c.ArmRecovery("legacy", next, 10*time.Second, func(*RestartRecovery) *RestartRecovery { fired += 10; return nil })
		return next
	})
	clock.Advance(5 * time.Second)
	settle(t, c, "legacy")
	if fired != 0 {
		t.Fatalf("the replaced recovery's timer fired (%d)", fired)
	}
	clock.Advance(5 * time.Second)
	settle(t, c, "legacy")
	if fired != 10 || c.HasRecovery("legacy") {
		t.Fatalf("after the second recovery's window: fired %d, HasRecovery %v; want 10, false", fired, c.HasRecovery("legacy"))
	}
	waitNoQueue(t, c, "legacy")
}

// TestRecoveryUnloadRerunsHeldJoins: a recovering group unloaded (or the
// coordinator closed) runs its held joins again, which then find the group
// gone, instead of holding them for ever; a join whose connection closed
// is not run.
func TestRecoveryUnloadRerunsHeldJoins(t *testing.T) {
	c, _ := gateOnClock(t)
	rerun, gone := make(chan struct{}), make(chan struct{})
	closed := make(chan struct{})
	close(closed)
	withRecovery(t, c, "legacy", func(*RestartRecovery) *RestartRecovery {
		return &RestartRecovery{Held: []RecoveryJoin{
			{Done: closed, Rerun: func() { close(gone) }},
			{Done: make(chan struct{}), Rerun: func() { close(rerun) }},
		}}
	})
	c.Unload("legacy")
	waitClosed(t, rerun, "the held join run again at the unload")
	select {
	case <-gone:
		t.Fatal("the join of a closed connection ran again")
	default:
	}
	if c.HasRecovery("legacy") {
		t.Fatal("the unloaded group still has a recovery")
	}
}
