package coordinator

import (
	"testing"
	"time"
)

// The takeover in progress of a group (migration_takeover.go), on its
// queue. (It was migration.Migration's takeovers map.)

// begun is what BeginTakeover returned.
type begun struct {
	finish func()
	gone   bool
}

// beginTakeover runs BeginTakeover on a goroutine of its own, and returns
// once its work is queued on the group's queue.
func beginTakeover(t *testing.T, c *Coordinator, group string, cancel <-chan struct{}) <-chan begun {
	t.Helper()
	ch := make(chan begun, 1)
	onGoroutine(t, c, func() {
		finish, gone := c.BeginTakeover(group, cancel)
		ch <- begun{finish, gone}
	})
	return ch
}

// onGoroutine runs f on a goroutine of its own, and returns once f queued a
// work on a group's queue (no other work may be queued meanwhile).
func onGoroutine(t *testing.T, c *Coordinator, f func()) {
	t.Helper()
	before := c.QueuedWork()
	go f()
	deadline := time.Now().Add(answerWait)
	for c.QueuedWork() == before {
		if time.Now().After(deadline) {
			t.Fatalf("no work queued within %v", answerWait)
		}
		time.Sleep(time.Millisecond)
	}
}

// notYet fails the test if BeginTakeover returned.
func notYet(t *testing.T, c *Coordinator, group string, ch <-chan begun, what string) {
	t.Helper()
	settle(t, c, group)
	select {
	case b := <-ch:
		t.Fatalf("%s returned while a takeover runs: %+v", what, b)
	default:
	}
}

// got is what BeginTakeover returned, failing the test after answerWait.
func got(t *testing.T, ch <-chan begun, what string) begun {
	t.Helper()
	select {
	case b := <-ch:
		return b
	case <-time.After(answerWait):
		t.Fatalf("%s never returned", what)
		return begun{}
	}
}

// TestTakeoverOneAtATime: a group's takeover runs alone; the joins that
// come meanwhile wait for its end (or their client's), then take the normal
// path; the next takeover may then start; the group's state goes with it,
// not with the end of another part of it (the pacing).
func TestTakeoverOneAtATime(t *testing.T) {
	c, _ := gateOnClock(t)
	first := got(t, beginTakeover(t, c, "app", nil), "the first takeover")
	if first.finish == nil || first.gone {
		t.Fatalf("the first takeover is not the caller's: %+v", first)
	}
	waiting := beginTakeover(t, c, "app", nil)
	notYet(t, c, "app", waiting, "a join during the takeover")
	cancel := make(chan struct{})
	leaving := beginTakeover(t, c, "app", cancel)
	notYet(t, c, "app", leaving, "a join during the takeover")
	other := got(t, beginTakeover(t, c, "other", nil), "another group's takeover")
	if other.finish == nil {
		t.Fatal("another group's takeover waited")
	}
	other.finish()
	// The pacing's end (a success) leaves the running takeover's state.
	c.TakeoverFailed("app", nil)
	c.TakeoverSucceeded("app")
	notYet(t, c, "app", waiting, "a join during the takeover")
	close(cancel)
	if b := got(t, leaving, "a join whose client left"); b.finish != nil || !b.gone {
		t.Fatalf("a join whose client left: %+v, want gone", b)
	}
	first.finish()
	if b := got(t, waiting, "a join after the takeover ended"); b.finish != nil || b.gone {
		t.Fatalf("a join after the takeover ended: %+v, want the normal path", b)
	}
	onQueue(t, c, "app", func(s *groupQueue) {
		if s.mig() != nil {
			t.Fatal("the migration state stayed after the takeover ended")
		}
	})
	next := got(t, beginTakeover(t, c, "app", nil), "the next takeover")
	if next.finish == nil {
		t.Fatal("the next takeover is not the caller's")
	}
	next.finish()
}

// TestTakeoverUnload: a group unloaded during its takeover lets the joins
// waiting for it go on; the takeover's own end then changes nothing.
func TestTakeoverUnload(t *testing.T) {
	c, _ := gateOnClock(t)
	first := got(t, beginTakeover(t, c, "app", nil), "the takeover")
	waiting := beginTakeover(t, c, "app", nil)
	notYet(t, c, "app", waiting, "a join during the takeover")
	c.Unload("app")
	if b := got(t, waiting, "a join when the group was unloaded"); b.finish != nil || b.gone {
		t.Fatalf("a join when the group was unloaded: %+v", b)
	}
	next := got(t, beginTakeover(t, c, "app", nil), "a takeover after the unload")
	first.finish() // ends nothing of next's
	waiting = beginTakeover(t, c, "app", nil)
	notYet(t, c, "app", waiting, "a join during the takeover after the unload")
	next.finish()
	got(t, waiting, "a join after the takeover ended")
}
