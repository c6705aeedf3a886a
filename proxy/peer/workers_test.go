package peer

import (
	"testing"
	"time"
)

// TestPeerWorkersReuse: calls one after the other run on one worker (no
// goroutine, no fresh stack per call).
func TestPeerWorkersReuse(t *testing.T) {
	t.Parallel()
	w := NewWorkers()
	for i := range 100 {
		done := make(chan struct{})
		w.Run(func() { close(done) })
		<-done
		// The worker is idle again once it waits on the next call: wait
		// for that before the next, as a steady stream of calls would
		// (the answer is written after the interceptor returns).
		waitIdle(t, w)
		if n := w.started.Load(); n != 1 {
			t.Fatalf("call %d: %d workers started, want 1", i, n)
		}
	}
}

// TestPeerWorkersNeverWait: a call whose interceptor blocks holds only its
// own worker; the next call runs at once on another.
func TestPeerWorkersNeverWait(t *testing.T) {
	t.Parallel()
	w := NewWorkers()
	block := make(chan struct{})
	defer close(block)
	w.Run(func() { <-block })
	done := make(chan struct{})
	go w.Run(func() { close(done) }) // a run that waited would hang the test
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the second call waited for the first one's worker")
	}
	if n := w.started.Load(); n != 2 {
		t.Fatalf("%d workers started, want 2", n)
	}
}

// TestPeerWorkersRetire: a worker whose idle time ran out ends, and the
// next call starts a new one; a call claimed before the retirement is
// still run.
func TestPeerWorkersRetire(t *testing.T) {
	t.Parallel()
	w := NewWorkers()
	done := make(chan struct{})
	w.Run(func() { close(done) })
	<-done
	waitIdle(t, w)
	// Claim the idle worker as Run does, then let its retirement race the
	// hand-over: the claim must still be served.
	if !w.idle.CompareAndSwap(1, 0) {
		t.Fatal("no idle worker to claim")
	}
	if w.retire() {
		t.Fatal("a worker retired although its claim was taken")
	}
}

// waitIdle waits until one worker waits for a call.
func waitIdle(t *testing.T, w *Workers) {
	t.Helper()
	waitFor(t, "the worker idle again", func() error {
		if w.idle.Load() != 1 {
			return errNotYet
		}
		return nil
	})
}
