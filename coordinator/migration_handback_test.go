package coordinator

import (
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// A hand-back driver's per-group state on the group's queue
// (migration_handback.go), in virtual time. (The run and check were
// migration.HandBack's runs and lastCheck maps; the grace test is ported
// from migration/handback_grace_test.go.)

// classicOnlyGroup is mixedGroup with its streams member gone: c1 is the
// group's only member, so the group can be handed back.
func classicOnlyGroup(t *testing.T) *harness {
	t.Helper()
	w, _ := mixedGroup(t)
	w.h.ok(hbReq("g", "s1", streams.LeaveGroupMemberEpoch, nil))
	delete(w.streams, "s1")
	return w.h
}

// startRun is StartHandBackRun on an inline coordinator: the run it
// started, or nil.
func startRun(c *Coordinator, every time.Duration) *HandBackRun {
	var run *HandBackRun
	c.StartHandBackRun("g", every, func(r *HandBackRun) { run = r })
	return run
}

// heldJoin is a held join that tells its number when served.
func heldJoin(n int, served chan<- int) HeldJoin {
	return HeldJoin{Timeout: time.Duration(n) * time.Second, Upstream: func(func()) {}, Serve: func() { served <- n }}
}

// TestHandBackRunOnQueue: a run starts only for a classic-only group and
// once at a time; it keeps the joins held at its barrier in arrival order
// until it ends; a join held after its end is the caller's to finish; its
// end drops the group's migration state.
func TestHandBackRunOnQueue(t *testing.T) {
	w, _ := mixedGroup(t)
	h := w.h
	if run := startRun(h.c, handBackEvery); run != nil {
		t.Fatal("a run started with a streams member in the group")
	}
	if h.queue("g").mig() != nil {
		t.Fatal("a check of a group that cannot be handed back left a migration state")
	}
	w.h.ok(hbReq("g", "s1", streams.LeaveGroupMemberEpoch, nil))
	run := startRun(h.c, handBackEvery)
	if run == nil {
		t.Fatal("no run started for a classic-only group")
	}
	h.advance(handBackEvery)
	if again := startRun(h.c, handBackEvery); again != nil {
		t.Fatal("a second run started while one is on")
	}
	served := make(chan int, 4)
	for n := 1; n <= 2; n++ {
		h.c.HoldForHandBack("g", heldJoin(n, served), func(held bool) {
			if !held {
				t.Fatalf("join %d not held with a run on", n)
			}
		})
	}
	var got []HeldJoin
	h.c.EndHandBackRun("g", run, func(held []HeldJoin) { got = held })
	if len(got) != 2 || got[0].Timeout != time.Second || got[1].Timeout != 2*time.Second {
		t.Fatalf("the run's held joins: %+v, want joins 1 and 2 in arrival order", got)
	}
	h.c.EndHandBackRun("g", run, func(held []HeldJoin) { got = held })
	if len(got) != 0 {
		t.Fatalf("a run ended twice gave its joins again: %+v", got)
	}
	h.c.HoldForHandBack("g", heldJoin(3, served), func(held bool) {
		if held {
			t.Fatal("a join held with no run on")
		}
	})
	if h.queue("g").mig() != nil {
		t.Fatal("the migration state stayed after the run ended")
	}
	if len(served) != 0 {
		t.Fatalf("a held join was served: %d", <-served)
	}
}

// handBackEvery is the checks' interval in these tests (the driver's).
const handBackEvery = 500 * time.Millisecond

// TestHandBackCheckPaced: while the group has a migration state, a check
// comes at most once per interval on the coordinator's clock.
func TestHandBackCheckPaced(t *testing.T) {
	h := classicOnlyGroup(t)
	run := startRun(h.c, handBackEvery)
	if run == nil {
		t.Fatal("no run started")
	}
	// The hand-back's last steps keep the state after the run ends.
	left := make(chan struct{})
	h.c.AnchorLeftForHandBack("g", func() { close(left) })
	waitClosed(t, left, "the anchor's leave noted")
	h.c.EndHandBackRun("g", run, func([]HeldJoin) {})
	h.advance(handBackEvery - time.Millisecond)
	if again := startRun(h.c, handBackEvery); again != nil {
		t.Fatalf("a check %v after the last one started a run", handBackEvery-time.Millisecond)
	}
	h.advance(time.Millisecond)
	if again := startRun(h.c, handBackEvery); again == nil {
		t.Fatalf("no run started %v after the last check", handBackEvery)
	}
}

// TestHandBackGraceOnClock: after a hand-back is done, streams joins of the
// group still wait its grace on the coordinator's clock, then go on; the
// group's state goes with the grace.
func TestHandBackGraceOnClock(t *testing.T) {
	c, clock := gateOnClock(t)
	const grace = 2 * time.Second
	left := make(chan struct{})
	c.AnchorLeftForHandBack("legacy", func() { close(left) })
	waitClosed(t, left, "the anchor's leave noted")
	waited := make(chan struct{})
	onGoroutine(t, c, func() {
		c.WaitHandBack("legacy", nil)
		close(waited)
	})
	c.HandBackDone("legacy", grace)
	settle(t, c, "legacy")
	clock.Advance(grace - time.Millisecond)
	settle(t, c, "legacy")
	select {
	case <-waited:
		t.Fatal("a streams join went on before the grace passed")
	default:
	}
	clock.Advance(time.Millisecond)
	waitClosed(t, waited, "the end of the grace")
	onQueue(t, c, "legacy", func(s *groupQueue) {
		if s.mig() != nil {
			t.Fatal("the migration state stayed after the grace")
		}
	})
}

// TestWaitHandBackNoHop: a streams join of a group in no hand-back's last
// steps waits for nothing and queues no work.
func TestWaitHandBackNoHop(t *testing.T) {
	c, _ := gateOnClock(t)
	before := c.QueuedWork()
	c.WaitHandBack("app", nil)
	if got := c.QueuedWork() - before; got != 0 {
		t.Fatalf("WaitHandBack of a group not migrating queued %d works", got)
	}
}

// TestHandBackUnload: a group unloaded during its hand-back serves the
// joins its run held (they find the group gone), and lets the joins waiting
// for the hand-back's last steps go on; the driver's own end of the run
// then gets no join a second time.
func TestHandBackUnload(t *testing.T) {
	h := classicOnlyGroup(t)
	run := startRun(h.c, handBackEvery)
	served := make(chan int, 2)
	h.c.HoldForHandBack("g", heldJoin(1, served), func(bool) {})
	left := make(chan struct{})
	h.c.AnchorLeftForHandBack("g", func() { close(left) })
	waitClosed(t, left, "the anchor's leave noted")
	waited := make(chan struct{})
	onGoroutine(t, h.c, func() {
		h.c.WaitHandBack("g", nil)
		close(waited)
	})
	h.c.Unload("g")
	waitClosed(t, waited, "the wait of a join when the group was unloaded")
	select {
	case n := <-served:
		if n != 1 {
			t.Fatalf("served join %d", n)
		}
	case <-time.After(answerWait):
		t.Fatal("the held join of an unloaded group was never served")
	}
	h.c.EndHandBackRun("g", run, func(held []HeldJoin) {
		if len(held) != 0 {
			t.Fatalf("the run's joins were given again after the unload: %+v", held)
		}
	})
}
