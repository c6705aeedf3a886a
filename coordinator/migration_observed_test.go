package coordinator

import (
	"testing"
	"time"
)

// What the forwarded classic requests showed (migration_observed.go), on
// the group's executor, in virtual time. (The observer's map and mutex in
// migration/observer.go, before.)

// queued reports whether the group has a queue, kept or not.
func queued(c *Coordinator, group string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queues[group] != nil
}

// waitNoQueue waits until the group's queue is dropped.
func waitNoQueue(t *testing.T, c *Coordinator, group string) {
	t.Helper()
	deadline := time.Now().Add(gateWait)
	for queued(c, group) {
		if time.Now().After(deadline) {
			t.Fatalf("the queue of %s was never dropped (waited %v)", group, gateWait)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestObservedClassicMembersExpire: memory stays bounded. A member is
// forgotten once twice its session timeout passed since it was last
// observed (Kafka Streams' default session, 45 s, when its JoinGroup was
// not seen); a group with none left drops its state and its queue.
func TestObservedClassicMembersExpire(t *testing.T) {
	c, clock := gateOnClock(t)
	start := clock.Now()
	c.ObserveClassic("legacy", ClassicObservation{Member: "a", At: start, SessionMs: 10000, RebalanceMs: 60000, Generation: 7, HaveGeneration: true})
	c.ObserveClassic("legacy", ClassicObservation{Member: "b", At: start, Generation: 7, HaveGeneration: true})
	c.ObserveClassic("legacy", ClassicObservation{Member: "nobody", At: start, AliveIfKnown: true})
	clock.Advance(19 * time.Second)
	m := c.ObservedClassicMembers("legacy")
	if a := m["a"]; len(m) != 2 || a.SessionMs != 10000 || a.RebalanceMs != 60000 || a.Generation != 7 || !a.LastHeartbeat.Equal(start) {
		t.Fatalf("observed after 19 s: %+v, want a (10 s session) and b", m)
	}
	c.ObserveClassic("legacy", ClassicObservation{Member: "b", At: clock.Now(), AliveIfKnown: true})
	clock.Advance(2 * time.Second) // 21 s: a was quiet for twice its session
	if m := c.ObservedClassicMembers("legacy"); len(m) != 1 || !m["b"].LastHeartbeat.Equal(start.Add(19*time.Second)) {
		t.Fatalf("observed after 21 s: %+v, want b alone, last alive at 19 s", m)
	}
	if !queued(c, "legacy") {
		t.Fatal("the queue holding b was dropped")
	}
	clock.Advance(88 * time.Second) // 109 s: b was quiet for 90 s
	if m := c.ObservedClassicMembers("legacy"); len(m) != 0 {
		t.Fatalf("observed after 109 s: %+v, want none", m)
	}
	waitNoQueue(t, c, "legacy")
}

// TestObserveIdleGroupQueuesNoWork: an observation of a group whose
// executor is idle (a classic group upstream) runs on the caller's
// goroutine in the executor's turn: no work is queued, and it is applied
// when ObserveClassic returns. The queue it keeps is not taken for the
// group's (hasQueue).
func TestObserveIdleGroupQueuesNoWork(t *testing.T) {
	c, clock := gateOnClock(t)
	before := c.QueuedWork()
	for i := range 10 {
		c.ObserveClassic("legacy", ClassicObservation{Member: "a", At: clock.Now(), Generation: int32(i), HaveGeneration: true})
	}
	if n := c.QueuedWork() - before; n != 0 {
		t.Fatalf("10 observations of an idle group queued %d works, want none", n)
	}
	if m := c.ObservedClassicMembers("legacy"); m["a"].Generation != 9 {
		t.Fatalf("observed %+v, want a at generation 9", m)
	}
	// The queue the observations keep holds no group: Ownership.MayOwn
	// (hasQueue) says so without a hop, so the group's OffsetFetch and
	// OffsetCommit go upstream at once.
	waitIdle := time.Now().Add(gateWait)
	for {
		c.mu.Lock()
		s := c.queues["legacy"]
		c.mu.Unlock()
		if s == nil {
			t.Fatal("the observed group's queue was dropped")
		}
		s.mu.Lock()
		idle := !s.running && len(s.queue) == 0
		s.mu.Unlock()
		if idle {
			break
		}
		if time.Now().After(waitIdle) {
			t.Fatalf("the queue never went idle (waited %v)", gateWait)
		}
		time.Sleep(time.Millisecond)
	}
	if c.hasQueue("legacy") {
		t.Fatal("a queue kept only by observations counts as the group's executor (MayOwn): the group's offset requests would cross it")
	}
}

// TestWatchClassicRejoin: a held JoinGroup or SyncGroup fires the watch
// once, which then keeps no state; a stop that comes first wins, and says
// so.
func TestWatchClassicRejoin(t *testing.T) {
	c, clock := gateOnClock(t)
	fired := make(chan struct{}, 2)
	stop := c.WatchClassicRejoin("legacy", func() { fired <- struct{}{} })
	c.ObserveClassic("legacy", ClassicObservation{Member: "a", At: clock.Now(), AliveIfKnown: true}) // a heartbeat
	c.ObserveClassic("legacy", ClassicObservation{At: clock.Now(), Rejoin: true})                    // a first JoinGroup
	c.ObserveClassic("legacy", ClassicObservation{Member: "b", At: clock.Now(), Rejoin: true})
	waitClosedOrSent(t, fired)
	// A fired watch is done, whether or not the takeover stops it: it
	// keeps no state.
	waitNoQueue(t, c, "legacy")
	if stop() {
		t.Fatal("stop after the watch fired reports it did not")
	}
	settle(t, c, "legacy")
	if len(fired) != 0 {
		t.Fatal("the watch fired twice")
	}
	stop = c.WatchClassicRejoin("legacy", func() { fired <- struct{}{} })
	if !stop() {
		t.Fatal("stop before any rejoin reports the watch fired")
	}
	c.ObserveClassic("legacy", ClassicObservation{Member: "b", At: clock.Now(), Rejoin: true})
	settle(t, c, "legacy")
	if len(fired) != 0 {
		t.Fatal("a stopped watch fired")
	}
	waitNoQueue(t, c, "legacy")
}

func waitClosedOrSent(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(gateWait):
		t.Fatalf("the rejoin watch never fired (waited %v)", gateWait)
	}
}
