package coordinator

import (
	"testing"
	"time"
)

// The gate of a migrating group (migration_state.go), on its executor, in
// virtual time. (Ported from migration/gate_test.go.)

// drainTimeout is the gate tests' drain timeout (the migration's default).
const drainTimeout = 15 * time.Second

// gateOnClock is a coordinator on a virtual clock.
func gateOnClock(t *testing.T) (*Coordinator, *ManualClock) {
	t.Helper()
	clock := NewManualClock(time.Unix(0, 0))
	c, err := New(Options{Clock: clock, Metadata: NewStaticMetadata()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, clock
}

// sent counts a request of the group in flight, as one that passed the
// gate and was forwarded; the returned answered takes it off.
func sent(c *Coordinator, group string) (answered func()) {
	enterClassic(c, group, func(a func()) { answered = a }, nil)
	return answered
}

// enterClassic runs f once the request passes the gate (at once, or on its
// release), calling held first if the gate holds it: the callbacks the
// route passes around EnterClassic's verdict.
func enterClassic(c *Coordinator, group string, f func(answered func()), held func()) {
	e := c.EnterClassic(group)
	if e.Verdict == ClassicHeld {
		if held != nil {
			held()
		}
		e.Wait(func(e ClassicEntry) { f(e.Answered) })
		return
	}
	f(e.Answered)
}

// settle waits until the work queued on the group before it has run: the
// group's queue runs its work in order.
func settle(t *testing.T, c *Coordinator, group string) {
	t.Helper()
	onQueue(t, c, group, func(*groupQueue) {})
}

// onQueue runs f as work of the group's queue and waits for it.
func onQueue(t *testing.T, c *Coordinator, group string, f func(*groupQueue)) {
	t.Helper()
	done := make(chan struct{})
	c.run(group, func(s *groupQueue) { f(s); close(done) }, nil)
	waitClosed(t, done, "a work of the group's queue")
}

// waitReleased waits until the group's held requests were all released
// and the gate lets requests pass again.
func waitReleased(t *testing.T, c *Coordinator, group string) {
	t.Helper()
	deadline := time.Now().Add(gateWait)
	for {
		released := false
		onQueue(t, c, group, func(s *groupQueue) { released = s.mig() == nil })
		if released {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the held requests of %s were never all released (waited %v)", group, gateWait)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestMigrationGate: Hold waits for the group's forwarded requests, holds
// what arrives meanwhile, and Release runs it in arrival order; other groups
// pass.
func TestMigrationGate(t *testing.T) {
	c, _ := gateOnClock(t)
	answered := sent(c, "app")
	drained := make(chan struct{})
	c.HoldClassic("app", drainTimeout, func() { close(drained) })
	settle(t, c, "app")
	select {
	case <-drained:
		t.Fatal("drained with a request in flight")
	default:
	}
	ran := make(chan int, 10)
	held := 0
	for i := 0; i < 3; i++ {
		enterClassic(c, "app", func(answered func()) { answered(); ran <- i }, func() { held++ })
	}
	enterClassic(c, "other", func(answered func()) { answered(); ran <- 100 }, func() { t.Error("another group's request held") })
	if held != 3 {
		t.Fatalf("%d requests reported held, want 3", held)
	}
	if got := next(t, ran); got != 100 {
		t.Fatalf("ran %d first, want the other group's request", got)
	}
	if n := c.ClassicInFlight("app"); n != 1 {
		t.Fatalf("%d requests of app in flight, want 1 (the held ones are not)", n)
	}
	answered()
	answered() // a second call is ignored
	waitClosed(t, drained, "the drain after the last answer")
	settle(t, c, "app")
	select {
	case got := <-ran:
		t.Fatalf("request %d ran while held", got)
	default:
	}
	c.ReleaseClassic("app")
	for want := 0; want < 3; want++ {
		if got := next(t, ran); got != want {
			t.Fatalf("released request %d, want %d (arrival order)", got, want)
		}
	}
	waitReleased(t, c, "app")
	// Idle again: requests pass, Hold drains at once.
	enterClassic(c, "app", func(answered func()) { answered(); ran <- 7 }, func() { t.Error("held while idle") })
	if got := next(t, ran); got != 7 {
		t.Fatalf("ran %d", got)
	}
	again := make(chan struct{})
	c.HoldClassic("app", drainTimeout, func() { close(again) })
	waitClosed(t, again, "the drain of an idle group")
	c.ReleaseClassic("app")
	waitReleased(t, c, "app")
	// Nothing keeps the queue of a group neither held nor in flight: it
	// goes once its drain has finished the last work (which waitReleased's
	// own work may still be).
	for deadline := time.Now().Add(gateWait); ; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		_, kept := c.queues["app"]
		c.mu.Unlock()
		if !kept {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue of an idle classic group was kept (waited %v)", gateWait)
		}
	}
}

// TestMigrationGateDrainTimeout: a forwarded request that never reports its
// answer (its client went away) does not block a takeover for ever: the
// drain ends once its timeout has passed on the coordinator's clock, not
// before.
func TestMigrationGateDrainTimeout(t *testing.T) {
	c, clock := gateOnClock(t)
	sent(c, "app")
	drained := make(chan struct{})
	c.HoldClassic("app", drainTimeout, func() { close(drained) })
	settle(t, c, "app")
	clock.Advance(drainTimeout - time.Millisecond)
	settle(t, c, "app")
	select {
	case <-drained:
		t.Fatal("drained before the timeout with a request in flight")
	default:
	}
	clock.Advance(time.Millisecond)
	waitClosed(t, drained, "the drain past its timeout")
	c.ReleaseClassic("app")
}

// TestMigrationGateCountsOnEntry: a request is counted in flight from the
// moment it passes the gate, before it is known whether it goes upstream,
// so a takeover starting in between waits for it.
func TestMigrationGateCountsOnEntry(t *testing.T) {
	c, _ := gateOnClock(t)
	var answered func()
	enterClassic(c, "app", func(a func()) { answered = a }, nil)
	drained := make(chan struct{})
	c.HoldClassic("app", drainTimeout, func() { close(drained) })
	// Hold drains at once (on a goroutine of its own) only when nothing is
	// in flight; otherwise it keeps the drain for the last answer.
	waiting := false
	onQueue(t, c, "app", func(s *groupQueue) { waiting = s.mig() != nil && s.mig().drained != nil })
	if !waiting {
		t.Fatal("drained while a request that passed the gate is not answered")
	}
	answered()
	waitClosed(t, drained, "the drain after the answer")
	c.ReleaseClassic("app")
}

// gateWait bounds every wait of the gate tests: a gate that never drains or
// never releases fails the test instead of hanging it.
const gateWait = 10 * time.Second

// next is the next request the gate let run, failing the test after gateWait.
func next(t *testing.T, ran <-chan int) int {
	t.Helper()
	select {
	case got := <-ran:
		return got
	case <-time.After(gateWait):
		t.Fatalf("no request ran within %v", gateWait)
		return 0
	}
}

// TestMigrationGateStaleDrainTimer: the drain timer of a takeover that
// already ended (drained, released) must not touch the next takeover's
// drain. It once did: firing during the next drain it cleared that drain's
// callback, so the next takeover never heard the group was drained and its
// streams member hung unanswered.
func TestMigrationGateStaleDrainTimer(t *testing.T) {
	c, clock := gateOnClock(t)
	first := sent(c, "app")
	drained1 := make(chan struct{})
	c.HoldClassic("app", drainTimeout, func() { close(drained1) })
	settle(t, c, "app")
	first()
	waitClosed(t, drained1, "the first drain")
	c.ReleaseClassic("app")
	waitReleased(t, c, "app")

	clock.Advance(drainTimeout / 2)
	second := sent(c, "app")
	drained2 := make(chan struct{})
	c.HoldClassic("app", drainTimeout, func() { close(drained2) })
	settle(t, c, "app")
	clock.Advance(drainTimeout/2 + time.Second) // the first drain's timer is due
	settle(t, c, "app")
	second()
	waitClosed(t, drained2, "the second drain after its last answer")
}

// TestMigrationGateUnloadReleases: a group unloaded while its requests are
// held does not keep them for ever: the takeover's drain goes on and the
// held requests run (finding the group gone).
func TestMigrationGateUnloadReleases(t *testing.T) {
	c, _ := gateOnClock(t)
	sent(c, "app")
	drained := make(chan struct{})
	c.HoldClassic("app", drainTimeout, func() { close(drained) })
	settle(t, c, "app")
	ran := make(chan int, 1)
	enterClassic(c, "app", func(answered func()) { answered(); ran <- 1 }, nil)
	settle(t, c, "app")
	c.Unload("app")
	waitClosed(t, drained, "the drain of an unloaded group")
	if got := next(t, ran); got != 1 {
		t.Fatalf("ran %d", got)
	}
}
