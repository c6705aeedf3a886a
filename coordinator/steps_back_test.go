package coordinator

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// A step back of a rolling migration (streams → classic), in virtual time
// (docs/fast-roll.md §12): classic.go's held join,
// streams/classic_join.go and streams/successor_watch.go.

// stepBackGroup: streams members s1 and s2 and classic member c1 share the
// 6 tasks of "foo", all stable. s2 has the process id its classic successor
// (newClassic(_, "ps2")) carries.
func stepBackGroup(t *testing.T) (*world, *classicClient) {
	t.Helper()
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w, c1 := mixedGroupOf(t, h)
	var p classicstreams.ProcessID
	copy(p[:], "ps2             ")
	w.streamsJoin("s2", p.String(), sourceTopology("foo"))
	for range 4 {
		w.settleStreams("s1")
		w.settleStreams("s2")
		c1.step()
	}
	if g := h.group("g"); g.State() != streams.GroupStable || len(c1.active) == 0 || streams.TasksCount(w.streams["s2"].owned.Active) == 0 {
		t.Fatalf("step-back group not settled: %v, c1 %v, s2 %v", g.State(), c1.active, w.streams["s2"].owned.Active)
	}
	return w, c1
}

// stepBack: s2 leaves (epoch -1), its successor (classic c2 of process
// ps2) has not joined within the group's session timeout, so s2, kept for
// it (streams/departed.go), is removed and the others take its tasks.
func stepBack(t *testing.T) (*world, *classicClient) {
	t.Helper()
	w, c1 := stepBackGroup(t)
	w.h.ok(hbReq("g", "s2", streams.LeaveGroupMemberEpoch, nil))
	delete(w.streams, "s2")
	waitOutDeparture(w, c1)
	for range 4 {
		w.settleStreams("s1")
		c1.step()
	}
	if g := w.h.group("g"); g.State() != streams.GroupStable || len(c1.active) != 3 {
		t.Fatalf("after s2 left: %v, c1 %v", g.State(), c1.active)
	}
	return w, c1
}

// departureWait is how long stepBack waits for s2's successor: the
// group's session timeout, heartbeating s1 and c1.
const departureWait = streams.DefaultSessionTimeout + time.Second

func waitOutDeparture(w *world, c1 *classicClient) {
	for elapsed := time.Duration(0); elapsed < departureWait; elapsed += time.Second {
		w.h.advance(time.Second)
		w.streamsHeartbeat("s1")
		c1.step()
	}
}

// The classic successor's JoinGroup is answered once, with its tasks, as
// soon as the streams member holding them revoked: no Heartbeat of its own
// and no second JoinGroup in between.
func TestClassicJoinHeldUntilTasksReleased(t *testing.T) {
	w, c1 := stepBack(t)
	g := w.h.group("g")
	c2 := w.newClassic("c2", "ps2")
	if j := c2.join(); !errors.Is(j.Err, errJoinHeld) {
		t.Fatalf("c2's join, its tasks still held by others: %+v", j)
	}
	// The others revoke (s1 at its heartbeat, c1 by rejoining); the join
	// stays held until the last one did.
	w.streamsHeartbeat("s1")
	w.streamsHeartbeat("s1")
	if !c2.waiting() {
		t.Fatal("c2's join answered while c1 still holds a task of its target")
	}
	c1.step()
	j, ok := c2.answer()
	if !ok || j.Err != nil || j.Generation != g.GroupEpoch {
		t.Fatalf("c2's join after the others revoked: %+v answered %v (group epoch %d, c2 %v)", j, ok, g.GroupEpoch, g.Members["c2"].CurrentAssignment().State)
	}
	if s, _ := c2.sync(); s.Err != nil || len(c2.active) != streams.TasksCount(g.Target["c2"].Active) || len(c2.active) == 0 {
		t.Fatalf("c2's first SyncGroup: %v, %v active, target %v", s.Err, c2.active, g.Target["c2"].Active)
	}
	if c2.mustRejoin() {
		t.Fatal("c2 told to rejoin after its one round")
	}
}

// A join that brings owned partitions is answered at once (a member that
// runs tasks keeps its transaction short), and a held join is answered with
// what is free when its hold (half its 10 s session) runs out.
func TestClassicJoinHoldBounds(t *testing.T) {
	w, c1 := stepBack(t)
	h, g := w.h, w.h.group("g")
	owned := slices.Clone(c1.owned)
	c2 := w.newClassic("c2", "ps2")
	if j := c2.join(); !errors.Is(j.Err, errJoinHeld) {
		t.Fatalf("c2's join: %+v", j)
	}
	// c1 rejoins owning its partitions: answered at once.
	if !c1.mustRejoin() {
		t.Fatal("c1 not told to rejoin after c2 joined")
	}
	if j := c1.join(); j.Err != nil || len(owned) == 0 {
		t.Fatalf("c1's rejoin with owned partitions %v: %+v", owned, j)
	}
	c1.sync()
	// s1 never heartbeats again: c2's join is answered at 5 s.
	h.advance(5*time.Second - time.Millisecond)
	if c2.held == nil || !c2.waiting() {
		t.Fatal("c2's join answered before its hold ran out")
	}
	h.advance(time.Millisecond)
	j, ok := c2.answer()
	if !ok || j.Err != nil || g.Members["c2"] == nil {
		t.Fatalf("c2's join after its hold: %+v answered %v", j, ok)
	}
}

// A held join of a group that is unloaded is answered NOT_COORDINATOR.
func TestClassicJoinHeldUnloaded(t *testing.T) {
	w, _ := stepBack(t)
	c2 := w.newClassic("c2", "ps2")
	if j := c2.join(); !errors.Is(j.Err, errJoinHeld) {
		t.Fatalf("c2's join: %+v", j)
	}
	w.h.c.Unload("g")
	if j, ok := c2.answer(); !ok || !errors.Is(j.Err, kerr.NotCoordinator) {
		t.Fatalf("held join of an unloaded group: %+v answered %v", j, ok)
	}
}

// After a streams member leaves a migrating group, the others are answered
// the short interval once stable, until the next join; after it, once
// stable again, the configured one.
func TestSuccessorWatchShortInterval(t *testing.T) {
	w, c1 := stepBackGroup(t)
	g := w.h.group("g")
	stable := func(id string) int32 {
		t.Helper()
		w.settleStreams(id)
		c1.step()
		w.settleStreams(id)
		return w.streamsHeartbeat(id).HeartbeatIntervalMillis
	}
	if got := stable("s1"); got != 5000 {
		t.Fatalf("s1 stable before any leave: interval %d", got)
	}
	w.h.ok(hbReq("g", "s2", streams.LeaveGroupMemberEpoch, nil))
	delete(w.streams, "s2")
	waitOutDeparture(w, c1)
	if got := stable("s1"); got != short || g.State() != streams.GroupStable {
		t.Fatalf("s1 stable while s2's successor is expected: interval %d, group %v", got, g.State())
	}
	// s2's successor: its target takes tasks from s1, which learns at
	// once.
	c2 := w.newClassic("c2", "ps2")
	if j := c2.join(); !errors.Is(j.Err, errJoinHeld) {
		t.Fatalf("c2's join: %+v", j)
	}
	w.streamsHeartbeat("s1")
	w.streamsHeartbeat("s1")
	c1.step()
	w.streamsHeartbeat("s1")
	c2.step()
	if got := stable("s1"); got != 5000 {
		t.Fatalf("s1 stable after the successor joined: interval %d", got)
	}
}

// The watch is for migrating groups: a streams-only group that was not
// taken over keeps the configured interval after a leave.
func TestSuccessorWatchNotWithoutMigration(t *testing.T) {
	h := twoMemberGroup(t, nil)
	g := h.group("g")
	h.ok(hbReq("g", "m2", streams.LeaveGroupMemberEpoch, nil))
	h.settle("m1")
	if r := h.ok(hbReq("g", "m1", g.Members["m1"].MemberEpoch(), nil)); r.HeartbeatIntervalMillis != 5000 || g.State() != streams.GroupStable {
		t.Fatalf("m1 stable after m2 left a streams-only group: interval %d, %v", r.HeartbeatIntervalMillis, g.State())
	}
}

// Without a join the watch ends after streams.SuccessorWatch (a JVM start on
// a loaded host), not at the group's session timeout.
func TestSuccessorWatchEnds(t *testing.T) {
	w, c1 := stepBack(t)
	h := w.h
	for elapsed := departureWait; elapsed < streams.SuccessorWatch-5*time.Second; elapsed += 5 * time.Second {
		h.advance(5 * time.Second)
		c1.step()
		if got := w.streamsHeartbeat("s1").HeartbeatIntervalMillis; got != short {
			t.Fatalf("s1 %v after s2 left: interval %d", elapsed+5*time.Second, got)
		}
	}
	h.advance(5 * time.Second)
	c1.step()
	if got := w.streamsHeartbeat("s1").HeartbeatIntervalMillis; got != 5000 {
		t.Fatalf("s1 once the successor watch ended: interval %d", got)
	}
}
