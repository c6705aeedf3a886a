package coordinator

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// TestClassicMixedRandom drives a group of classic and streams clients with
// random joins, leaves, crashes, restarts and interleavings, one virtual
// second per step, and checks after every request that no task is active
// on two clients and that no classic client ever gets a fencing error or a
// failed commit it did not provoke (the helpers fail the test on either).
func TestClassicMixedRandom(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { mixedRandom(t, seed) })
	}
}

func mixedRandom(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 8)
	w := newWorld(t, h, "g")
	if seed%2 == 0 {
		w.streamsJoin("s0", "ps0", sourceTopology("foo"))
	} else {
		// Start from a live classic group at generation 40, taken over
		// by the first streams member.
		a, b := w.newClassic("a", "pa"), w.newClassic("b", "pb")
		a.owned, a.active = fooPartitions(0, 1, 2, 3), cTasks(0, 1, 2, 3)
		b.owned, b.active = fooPartitions(4, 5, 6, 7), cTasks(4, 5, 6, 7)
		st := classicState(40, a, b)
		if r := w.takeOver(st, "s0", "ps0"); r.ErrorCode != 0 {
			t.Fatalf("takeover: %d", r.ErrorCode)
		}
	}
	next := 1
	for step := 0; step < 300; step++ {
		switch r := rng.IntN(100); {
		case r < 6 && len(w.classic) < 4:
			c := w.newClassic(fmt.Sprintf("c%d", next), fmt.Sprintf("pc%d", next))
			next++
			c.rebalance()
		case r < 10 && len(w.streams) < 3:
			id := fmt.Sprintf("s%d", next)
			next++
			w.streamsJoin(id, "p"+id, sourceTopology("foo"))
		case r < 12 && len(w.streams) > 1:
			// A streams member leaves for good.
			id := w.streamIDs()[rng.IntN(len(w.streams))]
			h.ok(hbReq("g", id, streams.LeaveGroupMemberEpoch, nil))
			delete(w.streams, id)
		case r < 14:
			// A classic member crashes: it stops talking and its session
			// times out; until then it is taken as still holding its tasks.
			for _, id := range w.classicIDs() {
				if c := w.classic[id]; !c.gone {
					c.gone = true
					break
				}
			}
		case r < 16:
			// A classic member leaves with LeaveGroup.
			for _, id := range w.classicIDs() {
				if !w.classic[id].gone {
					h.c.ClassicLeaveGroup("g", []streams.ClassicLeaveMember{{MemberID: id}}, func([]error, error) {})
					delete(w.classic, id)
					break
				}
			}
		}
		if len(w.streams) == 0 {
			// Keep a topology holder: classic members alone cannot form
			// a fresh streams group.
			id := fmt.Sprintf("s%d", next)
			next++
			w.streamsJoin(id, "p"+id, sourceTopology("foo"))
		}
		// Clients talk at their own pace: a streams member may revoke
		// late, a classic member may sync late.
		for _, id := range w.streamIDs() {
			if rng.IntN(2) == 0 {
				w.streamsHeartbeat(id)
			}
		}
		// Classic rebalances interleave with the others: a JoinGroup in
		// one step, its SyncGroup in the next, after streams heartbeats.
		for _, id := range w.classicIDs() {
			c := w.classic[id]
			if c.gone {
				if h.group("g").Members[id] == nil {
					delete(w.classic, id)
				}
				continue
			}
			if rng.IntN(5) == 0 || c.waitAnswer() {
				continue
			}
			if c.syncDue {
				c.syncDue = false
				if s, revoked := c.sync(); s.Err != nil || revoked {
					c.syncDue = c.joinNow()
				}
				continue
			}
			if c.mustRejoin() {
				c.syncDue = c.joinNow()
			}
		}
		h.advance(time.Second)
		w.check()
	}
	// Quiet: everything settles, and every task is held exactly once. A
	// streams member that left is kept for its successor (a member of
	// its process) for the session timeout (streams/departed.go); none
	// comes here.
	rounds := 10 + int(streams.DefaultSessionTimeout/(11*time.Second/10))
	for round := 0; round < rounds; round++ {
		for id := range w.streams {
			w.streamsHeartbeat(id)
		}
		for _, c := range w.classic {
			if c.gone || c.waitAnswer() {
				continue
			}
			if c.syncDue {
				c.syncDue = false
				c.sync()
			}
			if c.mustRejoin() {
				c.rebalance()
			}
		}
		h.advance(11 * time.Second / 10)
	}
	held := 0
	for _, c := range w.classic {
		if !c.gone {
			held += len(c.active)
		}
	}
	for _, s := range w.streams {
		held += streams.TasksCount(s.owned.Active)
	}
	if g := h.group("g"); held != 8 || g.State() != streams.GroupStable {
		t.Fatalf("after settling: %d of 8 tasks held, state %v", held, g.State())
	}
}

func (w *world) streamIDs() []string  { return sortedKeys(w.streams) }
func (w *world) classicIDs() []string { return sortedKeys(w.classic) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
