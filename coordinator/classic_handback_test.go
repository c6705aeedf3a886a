package coordinator

import (
	"errors"
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// told records what BeginHandBack's onBarrier was told, in order (the
// harness runs inline: it is told on the goroutine of the change that ended
// the barrier, before that call returns).
type told struct{ states []streams.HandBackState }

func (b *told) onBarrier(st streams.HandBackState) { b.states = append(b.states, st) }

// want fails the test unless the barrier's end was told n times, the last
// time as last.
func (b *told) want(t *testing.T, n int, last func(streams.HandBackState) bool) {
	t.Helper()
	if len(b.states) != n || n > 0 && !last(b.states[n-1]) {
		t.Fatalf("barrier's end told %+v, want %d times", b.states, n)
	}
}

func ready(st streams.HandBackState) bool   { return st.Running && st.Ready && !st.Aborted }
func aborted(st streams.HandBackState) bool { return st.Running && st.Aborted && !st.Ready }
func gone(st streams.HandBackState) bool    { return !st.Running && !st.Ready && !st.Aborted }

// handBackGroup: s1 and classic c1, c2 share the tasks; then s1 leaves
// and the barrier goes up; its end is told to the returned told.
func handBackGroup(t *testing.T) (*world, *classicClient, *classicClient, *told) {
	w, c1 := mixedGroup(t)
	c2 := w.newClassic("c2", "pc2")
	c2.rebalance()
	for round := 0; round < 4; round++ {
		w.streamsHeartbeat("s1")
		for _, c := range []*classicClient{c1, c2} {
			if c.mustRejoin() {
				c.rebalance()
			}
		}
	}
	w.h.ok(hbReq("g", "s1", streams.LeaveGroupMemberEpoch, nil))
	delete(w.streams, "s1")
	// s1 leaves for good: kept for a successor of its process
	// (streams/departed.go) that does not come, it goes at the group's
	// session timeout; c1 and c2 run on meanwhile.
	for elapsed := time.Duration(0); elapsed <= streams.DefaultSessionTimeout; elapsed += time.Second {
		w.h.advance(time.Second)
		for _, c := range []*classicClient{c1, c2} {
			if c.mustRejoin() {
				c.rebalance()
			}
		}
	}
	if w.h.group("g").Members["s1"] != nil {
		t.Fatal("s1 still waits for a successor after the session timeout")
	}
	var err error
	b := &told{}
	w.h.c.BeginHandBack("g", b.onBarrier, func(e error) { err = e })
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	b.want(t, 0, nil)
	return w, c1, c2, b
}

func handBackOf(w *world) streams.HandBackState {
	var st streams.HandBackState
	w.h.c.HandBack("g", func(s streams.HandBackState) { st = s })
	return st
}

// joinHeld is a classic member's way into the barrier: its first JoinGroup
// is answered and its SyncGroup gives it nothing, so it revokes every task
// (a clean close, and a commit); its next JoinGroup, owning nothing, is
// held. Without the revocation a member would enter the upstream group
// still running the served group's tasks (docs/fast-roll.md §11).
func (c *classicClient) joinHeld() streams.ClassicJoinResult {
	c.w.t.Helper()
	j := c.join()
	if j.Err != nil {
		return j
	}
	if res, revoked := c.sync(); res.Err != nil || len(c.active) != 0 || len(c.owned) != 0 {
		c.w.t.Fatalf("%s at the barrier: sync %v (revoked %v) left it %v", c.id, res.Err, revoked, c.active)
	}
	return c.join()
}

func TestHandBackBarrier(t *testing.T) {
	w, c1, c2, b := handBackGroup(t)
	for _, c := range []*classicClient{c1, c2} {
		if !c.mustRejoin() {
			t.Fatalf("%s not pulled into the barrier", c.id)
		}
	}
	if j := c1.joinHeld(); !errors.Is(j.Err, streams.ErrHandBackHeld) {
		t.Fatalf("c1 join: %v", j.Err)
	}
	if st := handBackOf(w); st.Ready || len(st.Held) != 1 {
		t.Fatalf("after c1: %+v", st)
	}
	b.want(t, 0, nil)
	// A held member is not fenced by its session timeout while held.
	for range 3 {
		w.h.advance(8 * time.Second)
		if !c2.mustRejoin() {
			t.Fatal("c2 not pulled")
		}
	}
	if w.h.group("g").Members["c1"] == nil {
		t.Fatal("held member fenced by its session timeout")
	}
	if !c2.mustRejoin() {
		t.Fatal("c2 not pulled")
	}
	b.want(t, 0, nil)
	if j := c2.joinHeld(); !errors.Is(j.Err, streams.ErrHandBackHeld) {
		t.Fatalf("c2 join: %v", j.Err)
	}
	// c2's held JoinGroup completes the barrier and tells it.
	b.want(t, 1, func(st streams.HandBackState) bool { return ready(st) && len(st.Held) == 2 })
	// A newcomer's join is held as well (it goes upstream with the
	// others), without being a member the barrier waits for.
	c3 := w.newClassic("c3", "pc3")
	if j := c3.join(); !errors.Is(j.Err, streams.ErrHandBackHeld) {
		t.Fatalf("newcomer: %v", j.Err)
	}
	delete(w.classic, "c3")
	st := handBackOf(w)
	if !st.Ready || len(st.Held) != 2 || w.h.group("g").Members["c3"] != nil {
		t.Fatalf("barrier: %+v", st)
	}
	var err error
	w.h.c.FinishHandBack("g", func(e error) { err = e })
	if err != nil || w.h.group("g") != nil {
		t.Fatalf("finish: %v group %v", err, w.h.group("g") != nil)
	}
	b.want(t, 1, ready) // told once
	w.h.checkReplay()
	// The classic clients own nothing when their JoinGroups go upstream
	// next; the last batch forgets the group.
	if len(c1.active) != 0 || len(c2.active) != 0 {
		t.Fatalf("classic clients hold %v and %v", c1.active, c2.active)
	}
	last := w.h.log.last()
	if len(last) == 0 || last[len(last)-1].Type != streams.RecordOwnership || !last[len(last)-1].Tombstone() {
		t.Fatalf("last batch %v", recordTypes(last))
	}
}

// A streams member joining during the barrier aborts it: the held
// JoinGroups are run again and served by the streams group.
func TestHandBackAbortedByStreamsJoin(t *testing.T) {
	w, c1, c2, b := handBackGroup(t)
	c1.mustRejoin()
	if j := c1.joinHeld(); !errors.Is(j.Err, streams.ErrHandBackHeld) {
		t.Fatalf("c1 join: %v", j.Err)
	}
	w.streamsJoin("s2", "ps2", sourceTopology("foo"))
	b.want(t, 1, aborted)
	st := handBackOf(w)
	if !st.Aborted || st.Ready {
		t.Fatalf("state %+v", st)
	}
	var err error
	w.h.c.FinishHandBack("g", func(e error) { err = e })
	if err == nil {
		t.Fatal("finished an aborted hand-back")
	}
	w.h.c.AbortHandBack("g", func() {})
	b.want(t, 1, aborted)
	for round := 0; round < 6; round++ {
		for _, c := range []*classicClient{c1, c2} {
			if round == 0 && c == c1 || c.mustRejoin() {
				c.rebalance()
			}
		}
		w.streamsHeartbeat("s2")
		w.h.advance(time.Second)
	}
	g := w.h.group("g")
	if g.State() != streams.GroupStable || len(c1.active)+len(c2.active)+streams.TasksCount(w.streams["s2"].owned.Active) != 6 {
		t.Fatalf("state %v", g.State())
	}
}

// A member that never rejoins does not block the barrier past its
// rebalance timeout; the timer that fences it tells the barrier's end, with
// no request arriving.
func TestHandBackMemberNeverRejoins(t *testing.T) {
	w, c1, c2, b := handBackGroup(t)
	logs := captureLogs(w.h)
	c1.mustRejoin()
	if j := c1.joinHeld(); !errors.Is(j.Err, streams.ErrHandBackHeld) {
		t.Fatal(j.Err)
	}
	c2.gone = true
	w.h.advance(61 * time.Second)
	// c2, silent, is fenced by its session timeout; c1, still held,
	// completes the barrier alone, and the fencing says so.
	b.want(t, 1, func(st streams.HandBackState) bool { return ready(st) && len(st.Held) == 1 && st.Held[0] == "c1" })
	st := handBackOf(w)
	if w.h.group("g").Members["c2"] != nil || w.h.group("g").Members["c1"] == nil || !st.Ready {
		t.Fatalf("state %+v", st)
	}
	// Held past twice its rebalance timeout, c1 goes too.
	w.h.advance(61 * time.Second)
	if w.h.group("g").Members["c1"] != nil {
		t.Fatal("held forever")
	}
	b.want(t, 1, ready) // told once
	c1.gone = true
	logs.want(t, "info", "Member c2 fenced from the group because "+streams.SessionExpiredReason+".")
	logs.want(t, "info", "Member c1 fenced from the group because its JoinGroup was held for the hand-back longer than twice its rebalance timeout.")
}

// The last member not held leaving completes the barrier and tells it.
func TestHandBackCompletedByLeave(t *testing.T) {
	w, c1, _, b := handBackGroup(t)
	c1.mustRejoin()
	if j := c1.joinHeld(); !errors.Is(j.Err, streams.ErrHandBackHeld) {
		t.Fatal(j.Err)
	}
	b.want(t, 0, nil)
	w.h.c.ClassicLeaveGroup("g", []streams.ClassicLeaveMember{{MemberID: "c2"}}, func([]error, error) {})
	delete(w.classic, "c2")
	b.want(t, 1, func(st streams.HandBackState) bool { return ready(st) && len(st.Held) == 1 })
}

// A barrier that goes away without ending (taken down by AbortHandBack, its
// group unloaded, the coordinator closed) tells its caller so: nobody is
// left waiting for it.
func TestHandBackBarrierGone(t *testing.T) {
	for _, tc := range []struct {
		name     string
		takeDown func(*Coordinator)
	}{
		{"taken down", func(c *Coordinator) { c.AbortHandBack("g", func() {}) }},
		{"unloaded", func(c *Coordinator) { c.Unload("g") }},
		{"closed", func(c *Coordinator) { c.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, c1, _, b := handBackGroup(t)
			c1.mustRejoin()
			if j := c1.joinHeld(); !errors.Is(j.Err, streams.ErrHandBackHeld) {
				t.Fatal(j.Err)
			}
			tc.takeDown(w.h.c)
			b.want(t, 1, gone)
			w.h.advance(time.Minute)
			b.want(t, 1, gone)
		})
	}
}

// The hand-back's exactly-once rule (docs/fast-roll.md §11): at the barrier
// a member that runs tasks is not held at its JoinGroup. Its join is
// answered, its SyncGroup gives it nothing, and it commits what it
// processed (at its generation, accepted) while it revokes; only its next
// JoinGroup, owning nothing, is held. The barrier is not Ready while a
// member still owns a task, so no member enters the upstream group running
// a task another member may be given there.
func TestHandBackMembersRevokeBeforeHeld(t *testing.T) {
	w, c1, c2, b := handBackGroup(t)
	if len(c1.active) == 0 || len(c2.active) == 0 {
		t.Fatalf("before the barrier c1 runs %v, c2 %v", c1.active, c2.active)
	}
	c1.mustRejoin()
	j := c1.join()
	if j.Err != nil {
		t.Fatalf("c1's join while it owns %v: %v (want an answer, not a hold)", c1.owned, j.Err)
	}
	if st := handBackOf(w); st.Ready || len(st.Held) != 0 {
		t.Fatalf("barrier with c1 still owning %v: %+v", c1.owned, st)
	}
	if res, revoked := c1.sync(); res.Err != nil || !revoked || len(c1.active) != 0 || len(res.Standby) != 0 {
		t.Fatalf("c1's SyncGroup at the barrier: %v, revoked %v, now runs %v", res.Err, revoked, c1.active)
	}
	// The revocation's commit, at the generation it joined with.
	if r := streams.ValidateClassicOffsetCommit(w.h.group("g"), streams.OffsetCommitRequest{GroupID: "g", MemberID: "c1", MemberEpoch: c1.generation}); r.Err != nil {
		t.Fatalf("c1's commit while it revokes: %v", r.Err)
	}
	if j := c1.join(); !errors.Is(j.Err, streams.ErrHandBackHeld) {
		t.Fatalf("c1's join owning nothing: %v", j.Err)
	}
	b.want(t, 0, nil)
	if st := handBackOf(w); st.Ready || len(st.Held) != 1 {
		t.Fatalf("c2 still owns %v, barrier %+v", c2.owned, st)
	}
	// Nobody took c1's tasks: the barrier's target is empty.
	c2.mustRejoin()
	if j := c2.join(); j.Err != nil {
		t.Fatalf("c2's join while it owns %v: %v", c2.owned, j.Err)
	}
	if res, _ := c2.sync(); res.Err != nil || len(c2.active) != 0 {
		t.Fatalf("c2's SyncGroup at the barrier: %v, now runs %v", res.Err, c2.active)
	}
	if j := c2.join(); !errors.Is(j.Err, streams.ErrHandBackHeld) {
		t.Fatalf("c2's join owning nothing: %v", j.Err)
	}
	b.want(t, 1, func(st streams.HandBackState) bool { return ready(st) && len(st.Held) == 2 })
	for id, m := range w.h.group("g").Members {
		if cur := m.CurrentAssignment(); !cur.Assigned.IsEmpty() || !cur.PendingRevocation.IsEmpty() {
			t.Fatalf("%s at the ready barrier owns %+v", id, cur)
		}
	}
}

// A barrier taken down without a streams member (the anchor could not
// leave upstream) gives the members their tasks back: the empty target of
// the barrier does not outlive it.
func TestHandBackTakenDownGivesTasksBack(t *testing.T) {
	w, c1, c2, b := handBackGroup(t)
	for _, c := range []*classicClient{c1, c2} {
		c.mustRejoin()
		if j := c.joinHeld(); !errors.Is(j.Err, streams.ErrHandBackHeld) {
			t.Fatalf("%s: %v", c.id, j.Err)
		}
	}
	b.want(t, 1, ready)
	w.h.c.AbortHandBack("g", func() {})
	for round := 0; round < 6; round++ {
		for _, c := range []*classicClient{c1, c2} {
			if round == 0 || c.mustRejoin() {
				c.rebalance()
			}
		}
		w.h.advance(time.Second)
	}
	if n := len(c1.active) + len(c2.active); n != 6 || len(c1.active) == 0 || len(c2.active) == 0 {
		t.Fatalf("after the barrier came down c1 runs %v, c2 %v", c1.active, c2.active)
	}
}
