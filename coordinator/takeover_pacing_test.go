package coordinator

import (
	"testing"
	"time"
)

// failed is TakeoverFailed's backoff, once the group's queue told it.
func failed(t *testing.T, c *Coordinator, group string) time.Duration {
	t.Helper()
	got := make(chan time.Duration, 1)
	c.TakeoverFailed(group, func(d time.Duration) { got <- d })
	select {
	case d := <-got:
		return d
	case <-time.After(gateWait):
		t.Fatalf("no backoff for %s within %v", group, gateWait)
		return 0
	}
}

// The backoff doubles up to its maximum (each wait less a jitter), is forgotten after a success, and
// a join waiting it out returns at once when its client goes. (Ported from
// migration/pacing_test.go: the backoff is the group's migration state.)
func TestTakeoverPacing(t *testing.T) {
	c, clock := gateOnClock(t)
	var got []time.Duration
	for range 6 {
		got = append(got, failed(t, c, "g"))
	}
	// Each less its jitter, up to a fifth (internal/backoff).
	want := []time.Duration{1, 2, 4, 8, 8, 8}
	for i := range want {
		if step := want[i] * time.Second; got[i] > step || got[i] < step-step/5 {
			t.Fatalf("backoffs %v, want %v seconds less up to a fifth", got, want)
		}
	}
	gone := make(chan struct{})
	close(gone)
	if c.TakeoverWait("g", gone) {
		t.Fatal("a join of a gone client waited its backoff out")
	}
	if !c.TakeoverWait("other", nil) {
		t.Fatal("a group that never failed waits")
	}
	c.TakeoverSucceeded("g")
	first := func(d time.Duration) bool { return d <= time.Second && d >= time.Second*4/5 }
	if !c.TakeoverWait("g", nil) || !first(failed(t, c, "g")) {
		t.Fatal("a success did not reset the backoff")
	}
	// A group not attempted for a whole maximum after its wait is
	// forgotten, and its queue with it.
	clock.Advance(time.Second + TakeoverBackoffMax + time.Millisecond)
	settle(t, c, "g")
	c.mu.Lock()
	_, kept := c.queues["g"]
	c.mu.Unlock()
	if kept {
		t.Fatal("a quiet group kept its backoff")
	}
	if !first(failed(t, c, "g")) {
		t.Fatal("a quiet group kept its backoff")
	}
}

// A join waits out the group's backoff on the coordinator's clock, and not
// longer.
func TestTakeoverWaitsBackoff(t *testing.T) {
	c, clock := gateOnClock(t)
	failed(t, c, "g")
	failed(t, c, "g") // next attempt in 2 s
	waited := make(chan bool, 1)
	go func() { waited <- c.TakeoverWait("g", nil) }()
	deadline := time.Now().Add(gateWait)
	for clock.Pending() < 2 { // the forgetting, then the wait
		select {
		case <-waited:
			t.Fatal("a join went on without waiting its backoff")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the join never waited on the clock (waited %v)", gateWait)
		}
		time.Sleep(time.Millisecond)
	}
	clock.Advance(2*time.Second - time.Millisecond)
	select {
	case <-waited:
		t.Fatal("a join went on before the backoff passed")
	default:
	}
	clock.Advance(time.Millisecond)
	select {
	case ok := <-waited:
		if !ok {
			t.Fatal("the wait reported its client gone")
		}
	case <-time.After(gateWait):
		t.Fatalf("the join still waits after its backoff (waited %v)", gateWait)
	}
}
