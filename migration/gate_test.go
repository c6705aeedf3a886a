package migration

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/coordinator"
)

// gateOnClock is a gate on a virtual clock with the default drain timeout.
func gateOnClock() (*Gate, *coordinator.ManualClock) {
	clock := coordinator.NewManualClock(time.Unix(0, 0))
	return newGate(clock, drainTimeout, zerolog.Nop()), clock
}

// drainTimeout is the gate tests' drain timeout (the migration's default).
const drainTimeout = 15 * time.Second

// TestMigrationGate: Hold waits for the group's forwarded requests, holds
// what arrives meanwhile, and Release runs it in arrival order; other groups
// pass.
func TestMigrationGate(t *testing.T) {
	g, _ := gateOnClock()
	answered := g.sent("app")
	drained := make(chan struct{})
	g.Hold("app", func() { close(drained) })
	select {
	case <-drained:
		t.Fatal("drained with a request in flight")
	default:
	}
	ran := make(chan int, 10)
	held := 0
	for i := 0; i < 3; i++ {
		g.Enter("app", func(answered func()) { answered(); ran <- i }, func() { held++ })
	}
	g.Enter("other", func(answered func()) { answered(); ran <- 100 }, func() { t.Error("another group's request held") })
	if held != 3 {
		t.Fatalf("%d requests reported held, want 3", held)
	}
	if got := next(t, ran); got != 100 {
		t.Fatalf("ran %d first, want the other group's request", got)
	}
	answered()
	answered() // a second call is ignored
	waitClosed(t, drained, "the drain after the last answer")
	select {
	case got := <-ran:
		t.Fatalf("request %d ran while held", got)
	default:
	}
	g.Release("app")
	for want := 0; want < 3; want++ {
		if got := next(t, ran); got != want {
			t.Fatalf("released request %d, want %d (arrival order)", got, want)
		}
	}
	// Idle again: requests pass, Hold drains at once.
	g.Enter("app", func(answered func()) { answered(); ran <- 7 }, func() { t.Error("held while idle") })
	if got := next(t, ran); got != 7 {
		t.Fatalf("ran %d", got)
	}
	again := make(chan struct{})
	g.Hold("app", func() { close(again) })
	waitClosed(t, again, "the drain of an idle group")
	g.Release("app")
}

// TestMigrationGateDrainTimeout: a forwarded request that never reports its
// answer (its client went away) does not block a takeover for ever: the
// drain ends once its timeout has passed on the coordinator's clock, not
// before.
func TestMigrationGateDrainTimeout(t *testing.T) {
	g, clock := gateOnClock()
	g.sent("app")
	drained := make(chan struct{})
	g.Hold("app", func() { close(drained) })
	clock.Advance(drainTimeout - time.Millisecond)
	select {
	case <-drained:
		t.Fatal("drained before the timeout with a request in flight")
	default:
	}
	clock.Advance(time.Millisecond)
	waitClosed(t, drained, "the drain past its timeout")
	g.Release("app")
}

// TestMigrationGateCountsOnEntry: a request is counted in flight from the
// moment it passes the gate, before it is known whether it goes upstream,
// so a takeover starting in between waits for it.
func TestMigrationGateCountsOnEntry(t *testing.T) {
	g, _ := gateOnClock()
	var answered func()
	g.Enter("app", func(a func()) { answered = a }, nil)
	drained := make(chan struct{})
	g.Hold("app", func() { close(drained) })
	// Hold drains at once (on a goroutine of its own) only when nothing is
	// in flight; otherwise it keeps the drain for the last answer.
	g.mu.Lock()
	waiting := g.groups["app"].drain != nil
	g.mu.Unlock()
	if !waiting {
		t.Fatal("drained while a request that passed the gate is not answered")
	}
	answered()
	waitClosed(t, drained, "the drain after the answer")
	g.Release("app")
}

// gateWait bounds every wait of the gate tests: a gate that never drains or
// never releases fails the test instead of hanging it.
const gateWait = 10 * time.Second

// waitClosed waits for ch to be closed, failing the test after gateWait.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(gateWait):
		t.Fatalf("%s never happened (waited %v)", what, gateWait)
	}
}

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

// TestHandBackGraceOnClock: after a hand-back is done, streams joins of the
// group still wait handBackGrace on the coordinator's clock, then go on.
func TestHandBackGraceOnClock(t *testing.T) {
	clock := coordinator.NewManualClock(time.Unix(0, 0))
	c, err := coordinator.New(coordinator.Options{Clock: clock, Metadata: coordinator.NewStaticMetadata()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	hb := &handingBack{done: make(chan struct{})}
	u := &migrationUpstream{clock: c, log: zerolog.Nop(), handingBack: map[string]*handingBack{"legacy": hb}}
	waited := make(chan struct{})
	go func() {
		u.waitHandBack("legacy", nil)
		close(waited)
	}()
	u.HandBackDone("legacy")
	clock.Advance(handBackGrace - time.Millisecond)
	select {
	case <-hb.done: // closed inside Advance when the grace ends
		t.Fatal("a streams join went on before the grace passed")
	default:
	}
	clock.Advance(time.Millisecond)
	waitClosed(t, waited, "the end of the grace")
}

// TestMigrationGateStaleDrainTimer: the drain timer of a takeover that
// already ended (drained, released) must not touch the next takeover's
// drain. It once did: firing during the next drain it cleared that drain's
// callback, so the next takeover never heard the group was drained and its
// streams member hung unanswered.
func TestMigrationGateStaleDrainTimer(t *testing.T) {
	g, clock := gateOnClock()
	first := g.sent("app")
	drained1 := make(chan struct{})
	g.Hold("app", func() { close(drained1) })
	first()
	waitClosed(t, drained1, "the first drain")
	g.Release("app")

	clock.Advance(drainTimeout / 2)
	second := g.sent("app")
	drained2 := make(chan struct{})
	g.Hold("app", func() { close(drained2) })
	clock.Advance(drainTimeout/2 + time.Second) // the first drain's timer is due
	second()
	waitClosed(t, drained2, "the second drain after its last answer")
}
