package coordinator

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// A departed member's tasks kept for its successor (streams/departed.go,
// docs/fast-roll.md §13), in virtual time.

// leaveS2 makes s2 leave (epoch -1) and the others run a few seconds; it
// returns the tasks s2 ran.
func leaveS2(w *world, c1 *classicClient) streams.Tasks {
	w.t.Helper()
	ran := w.streams["s2"].owned.Active
	w.h.ok(hbReq("g", "s2", streams.LeaveGroupMemberEpoch, nil))
	delete(w.streams, "s2")
	for range 3 {
		w.h.advance(time.Second)
		w.settleStreams("s1")
		c1.step()
	}
	return ran
}

// The step back of a rolling migration: s2 leaves, nothing moves while its
// successor starts (no group epoch bump, s1 and c1 keep exactly their
// tasks), and the successor's first JoinGroup, same process id, is answered
// at once with s2's tasks: each task moves once. Before, s1 and c1 took
// them at the leave and gave them back a round later.
func TestDepartedTasksGoToSuccessor(t *testing.T) {
	w, c1 := stepBackGroup(t)
	g := w.h.group("g")
	epoch := g.GroupEpoch
	s1Ran, c1Ran := w.streams["s1"].owned.Active, slices.Clone(c1.active)
	ran := leaveS2(w, c1)
	if g.GroupEpoch != epoch || !streams.TasksEqual(w.streams["s1"].owned.Active, s1Ran) || len(c1.active) != len(c1Ran) {
		t.Fatalf("after s2 left: group epoch %d (was %d), s1 %v (was %v), c1 %v (was %v)", g.GroupEpoch, epoch, w.streams["s1"].owned.Active, s1Ran, c1.active, c1Ran)
	}
	if m := g.Members["s2"]; m == nil || !m.Departed() {
		t.Fatalf("s2 not kept for its successor: %+v", m)
	}
	c2 := w.newClassic("c2", "ps2")
	if j := c2.join(); j.Err != nil {
		t.Fatalf("the successor's join: %+v", j)
	}
	if g.Members["s2"] != nil {
		t.Fatal("s2 not replaced by its successor")
	}
	if s, _ := c2.sync(); s.Err != nil || len(c2.active) != streams.TasksCount(ran) {
		t.Fatalf("the successor's first SyncGroup: %v, %v active; s2 ran %v", s.Err, c2.active, ran)
	}
	if c2.mustRejoin() {
		t.Fatal("the successor told to rejoin after its one round")
	}
	w.settleAll()
	if g.State() != streams.GroupStable {
		t.Fatalf("group after the successor: %v", g.State())
	}
}

// A member of a process new to the group (a stateless app's successor, a
// new instance) ends the wait: s2 goes, and its tasks are assigned.
func TestDepartedReleasedByNewProcess(t *testing.T) {
	w, c1 := stepBackGroup(t)
	g := w.h.group("g")
	leaveS2(w, c1)
	c3 := w.newClassic("c3", "pnew")
	if j := c3.join(); j.Err != nil {
		t.Fatalf("c3's join: %+v", j)
	}
	if g.Members["s2"] != nil {
		t.Fatal("s2 still waits after a member of a new process joined")
	}
	c3.sync()
	w.settleAll()
	if n := len(c3.active); n == 0 || len(c1.active)+n+streams.TasksCount(w.streams["s1"].owned.Active) != 6 {
		t.Fatalf("after c3 joined: c3 %v, c1 %v, s1 %v", c3.active, c1.active, w.streams["s1"].owned.Active)
	}
}

// Without a successor (a scale-in) s2 waits the group's session timeout,
// then goes, and the others take its tasks.
func TestDepartedExpires(t *testing.T) {
	w, c1 := stepBackGroup(t)
	g := w.h.group("g")
	leaveS2(w, c1) // 3 s
	for elapsed := 3 * time.Second; elapsed < streams.DefaultSessionTimeout-time.Second; elapsed += time.Second {
		w.h.advance(time.Second)
		w.streamsHeartbeat("s1")
		c1.step()
	}
	if m := g.Members["s2"]; m == nil || !m.Departed() {
		t.Fatal("s2 gone before the session timeout")
	}
	w.h.advance(2 * time.Second)
	if g.Members["s2"] != nil {
		t.Fatal("s2 still in the group after the session timeout")
	}
	for range 4 {
		w.settleAll()
	}
	if n := len(c1.active) + streams.TasksCount(w.streams["s1"].owned.Active); n != 6 || g.State() != streams.GroupStable {
		t.Fatalf("after s2 expired: %d of 6 tasks run, %v", n, g.State())
	}
}

// The last streams member is kept too, and the group is classic-only: the
// hand-back's barrier goes up, but is not Ready while s1 may still have a
// successor. Its successor's JoinGroup, same process id, at the barrier, is
// held with the others (it goes to the broker's group with them) and ends
// the wait: the barrier is Ready.
func TestDepartedLastStreamsMemberAtHandBack(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	var p classicstreams.ProcessID
	copy(p[:], "ps1             ")
	w.streamsJoin("s1", p.String(), sourceTopology("foo"))
	c1 := w.newClassic("c1", "pc1")
	w.settleAll()
	epoch := h.group("g").GroupEpoch
	h.ok(hbReq("g", "s1", streams.LeaveGroupMemberEpoch, nil))
	delete(w.streams, "s1")
	g := h.group("g")
	if m := g.Members["s1"]; m == nil || !m.Departed() || g.GroupEpoch != epoch+1 {
		t.Fatalf("the last streams member: %+v, group epoch %d (was %d; the classic members must be pulled)", m, g.GroupEpoch, epoch)
	}
	var only bool
	h.c.ClassicOnly("g", func(b bool) { only = b })
	if !only {
		t.Fatal("group not classic-only after its last streams member left")
	}
	b := &told{}
	var err error
	h.c.BeginHandBack("g", b.onBarrier, func(e error) { err = e })
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	if !c1.mustRejoin() {
		t.Fatal("c1 not pulled into the barrier")
	}
	if j := c1.joinHeld(); !errors.Is(j.Err, streams.ErrHandBackHeld) {
		t.Fatalf("c1 join: %v", j.Err)
	}
	b.want(t, 0, nil) // s1 may still have a successor
	c2 := w.newClassic("c2", "ps1")
	if j := c2.join(); !errors.Is(j.Err, streams.ErrHandBackHeld) {
		t.Fatalf("s1's successor at the barrier: %+v", j)
	}
	if g.Members["s1"] != nil || g.Members["c2"] != nil {
		t.Fatal("s1 not ended by its successor, or the successor made a member here")
	}
	b.want(t, 1, func(st streams.HandBackState) bool { return ready(st) && len(st.Held) == 1 })
}

// With the disconnect expiry on, a departed member whose connection closed
// after its leave goes K heartbeat intervals after the close, before the
// session timeout: a scale-in waits that long, not the 45 s.
func TestDepartedEndedByDisconnectExpiry(t *testing.T) {
	h, w := expiryHarness(t)
	conn1, conn2 := make(chan struct{}), make(chan struct{})
	w.streamsJoinOn("s1", "p1", "", conn1)
	w.streamsJoinOn("s2", "p2", "", conn2)
	c1 := w.newClassic("c1", "pc1")
	w.settleAll()
	h.okOn(hbReq("g", "s2", streams.LeaveGroupMemberEpoch, nil), conn2)
	delete(w.streams, "s2")
	g := h.group("g")
	if m := g.Members["s2"]; m == nil || !m.Departed() {
		t.Fatal("s2 not kept for its successor")
	}
	closeConn(t, h, conn2)
	run := func(d time.Duration) {
		for elapsed := time.Duration(0); elapsed < d; elapsed += time.Second {
			h.advance(time.Second)
			w.streamsHeartbeat("s1")
			c1.step()
		}
	}
	run(streamsExpiry - time.Second)
	if g.Members["s2"] == nil {
		t.Fatal("s2 gone before the disconnect expiry")
	}
	run(2 * time.Second)
	if g.Members["s2"] != nil {
		t.Fatalf("s2 still waits %v after its connection closed", streamsExpiry+time.Second)
	}
}
