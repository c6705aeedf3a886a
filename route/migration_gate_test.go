package route

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestMigrationGate: Hold waits for the group's forwarded requests, holds
// what arrives meanwhile, and Release runs it in arrival order; other groups
// pass.
func TestMigrationGate(t *testing.T) {
	g := newMigrationGate(time.Hour, zerolog.Nop())
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
		g.enter("app", func(answered func()) { answered(); ran <- i }, func() { held++ })
	}
	g.enter("other", func(answered func()) { answered(); ran <- 100 }, func() { t.Error("another group's request held") })
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
	g.enter("app", func(answered func()) { answered(); ran <- 7 }, func() { t.Error("held while idle") })
	if got := next(t, ran); got != 7 {
		t.Fatalf("ran %d", got)
	}
	again := make(chan struct{})
	g.Hold("app", func() { close(again) })
	waitClosed(t, again, "the drain of an idle group")
	g.Release("app")
}

// TestMigrationGateDrainTimeout: a forwarded request that never reports its
// answer (its client went away) does not block a takeover for ever.
func TestMigrationGateDrainTimeout(t *testing.T) {
	g := newMigrationGate(time.Millisecond, zerolog.Nop())
	g.sent("app")
	drained := make(chan struct{})
	g.Hold("app", func() { close(drained) })
	waitClosed(t, drained, "the drain past its timeout")
	g.Release("app")
}

// TestMigrationGateCountsOnEntry: a request is counted in flight from the
// moment it passes the gate, before it is known whether it goes upstream,
// so a takeover starting in between waits for it.
func TestMigrationGateCountsOnEntry(t *testing.T) {
	g := newMigrationGate(time.Hour, zerolog.Nop())
	var answered func()
	g.enter("app", func(a func()) { answered = a }, nil)
	drained := make(chan struct{})
	g.Hold("app", func() { close(drained) })
	select {
	case <-drained:
		t.Fatal("drained while a request that passed the gate is not answered")
	case <-time.After(20 * time.Millisecond):
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
