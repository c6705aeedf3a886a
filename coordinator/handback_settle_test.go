package coordinator

import (
	"errors"
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// handedBack runs handBackGroup's hand-back to its end (both classic
// members held, the streams group deleted) with ev hearing the events.
func handedBack(t *testing.T, ev Events) *world {
	t.Helper()
	w, c1, c2, _ := handBackGroup(t)
	w.h.c.events = ev
	for _, c := range []*classicClient{c1, c2} {
		c.mustRejoin()
		if j := c.joinHeld(); !errors.Is(j.Err, streams.ErrHandBackHeld) {
			t.Fatalf("%s join: %v", c.id, j.Err)
		}
	}
	var err error
	w.h.c.FinishHandBack("g", func(e error) { err = e })
	if err != nil || w.h.group("g") != nil {
		t.Fatalf("finish: %v", err)
	}
	return w
}

// The broker's classic answers after a hand-back, as the forwarding path
// observes them.
func joined(member string, gen int32, members ...string) ClassicObservation {
	return ClassicObservation{Member: member, Generation: gen, HaveGeneration: true, Joined: true, SessionMs: 45000, RebalanceMs: 300000, GenerationMembers: members}
}

func synced(member string, gen int32) ClassicObservation {
	return ClassicObservation{Member: member, Generation: gen, HaveGeneration: true, Synced: true}
}

// A hand-back is over for the app when every member of the broker's new
// classic generation has its assignment: the coordinator tells
// EventClassicGroupSynced at the last member's SyncGroup answer, not
// before (not at the first member's, not for a generation the broker
// replaced by a newer one before every member synced), and once.
func TestHandBackSettlesWhenGenerationSynced(t *testing.T) {
	ev := &kindEvents{}
	w := handedBack(t, ev)
	c := w.h.c
	settledEvents := func() []GroupEvent { return ev.of(EventClassicGroupSynced) }
	// Generation 1: a (the leader, its answer lists a and b) and b join;
	// a syncs, then the broker rebalances again before b synced.
	c.ObserveClassic("g", joined("b", 1))
	c.ObserveClassic("g", joined("a", 1, "a", "b"))
	c.ObserveClassic("g", synced("a", 1))
	if n := len(settledEvents()); n != 0 {
		t.Fatalf("settled with b of generation 1 not synced (%d events)", n)
	}
	// Generation 2: a, b and newcomer x; a heartbeat of a is no sync.
	c.ObserveClassic("g", joined("a", 2, "a", "b", "x"))
	c.ObserveClassic("g", joined("b", 2))
	c.ObserveClassic("g", synced("b", 1)) // late answer of the older generation
	c.ObserveClassic("g", synced("a", 2))
	c.ObserveClassic("g", ClassicObservation{Member: "x", Generation: 2, HaveGeneration: true})
	c.ObserveClassic("g", synced("b", 2))
	if n := len(settledEvents()); n != 0 {
		t.Fatalf("settled before x of generation 2 synced (%d events)", n)
	}
	w.h.advance(2500 * time.Millisecond)
	c.ObserveClassic("g", synced("x", 2))
	got := settledEvents()
	if len(got) != 1 || got[0].Group != "g" || got[0].Fields["generation"] != int32(2) || got[0].Fields["members"] != 3 ||
		!got[0].At.Equal(w.h.clock.Now()) {
		t.Fatalf("events %+v, want one for generation 2 with 3 members, now", got)
	}
	// A later rebalance of the classic group is not the hand-back's.
	c.ObserveClassic("g", joined("a", 3, "a"))
	c.ObserveClassic("g", synced("a", 3))
	if n := len(settledEvents()); n != 1 {
		t.Fatalf("%d events after a later rebalance, want the hand-back's one", n)
	}
}

// A classic group that was not handed back here tells nothing, and keeps
// no wait.
func TestClassicGroupNotHandedBackTellsNoSettle(t *testing.T) {
	ev := &kindEvents{}
	h := newHarness(t, nil)
	h.c.events = ev
	h.c.ObserveClassic("plain", joined("a", 1, "a"))
	h.c.ObserveClassic("plain", synced("a", 1))
	if n := len(ev.of(EventClassicGroupSynced)); n != 0 {
		t.Fatalf("%d settle events for a group never handed back", n)
	}
}
