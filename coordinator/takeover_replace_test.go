package coordinator

import (
	"testing"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// Replacement by identity at the takeover (docs/fast-roll.md §7 test 7): the
// first classic → streams step. The classic member of the stopped process
// is still upstream; the observer saw its connection close. The streams
// member of that process, whose join triggers the takeover, replaces it
// instead of it being carried over with what is left of its session: it
// holds the stopped member's tasks at once; the other member is carried.

// takeoverRoll is a classic group at generation 22: c1 (process pA) holds
// tasks 0-2, c2 (process pB) 3-5, each on its own connection as the
// observer saw them (open, or nil: unknown).
func takeoverRoll(t *testing.T, c1conn, c2conn chan struct{}) (*world, *classicClient, *classicClient, streams.ClassicGroupState) {
	t.Helper()
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	c1, c2 := w.newClassic("c1", "pA"), w.newClassic("c2", "pB")
	c1.owned, c1.active = fooPartitions(0, 1, 2), cTasks(0, 1, 2)
	c2.owned, c2.active = fooPartitions(3, 4, 5), cTasks(3, 4, 5)
	st := classicState(22, c1, c2)
	for i, conn := range []chan struct{}{c1conn, c2conn} {
		if conn != nil {
			st.Members[i].Client.ConnID, st.Members[i].Client.Closed = uint64(i+1), conn
		}
	}
	return w, c1, c2, st
}

func TestTakeoverReplacesStoppedClassicProcess(t *testing.T) {
	c1conn := make(chan struct{})
	w, c1, c2, st := takeoverRoll(t, c1conn, make(chan struct{}))
	c1.gone = true
	close(c1conn)
	logs := captureLogs(w.h)
	resp := w.takeOver(st, "a1", c1.process.String())
	if resp.ErrorCode != 0 {
		t.Fatalf("takeover: %d %v", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	g := w.h.group("g")
	if g.Members["c1"] != nil {
		t.Fatal("the stopped classic member was carried over")
	}
	if g.Members["c2"] == nil || g.Members["c2"].MemberEpoch() != 22 {
		t.Fatal("the live classic member was not carried over at its generation")
	}
	first := firstCurrent(t, w.h.log.last(), "a1")
	if first.MemberEpoch != 0 || !streams.TasksEqual(first.Assigned.Active, activeSet(c1.active)) {
		t.Fatalf("a1 first written with %v at epoch %d, the stopped member held %v", first.Assigned.Active, first.MemberEpoch, c1.active)
	}
	if n := streams.TasksCount(w.streams["a1"].owned.Active); n == 0 {
		t.Fatal("a1 was answered with no task")
	}
	if ts := timersOf(w.h, "c1"); len(ts) > 0 {
		t.Fatalf("timers of the replaced member: %v", ts)
	}
	logs.want(t, "info", "Created a new member a1 to replace them (replaced by identity (process))")
	w.settleAll()
	total := 0
	for _, s := range w.streams {
		total += streams.TasksCount(s.owned.Active)
	}
	total += len(c2.active)
	if total != 6 {
		t.Fatalf("%d tasks active after settling, want 6", total)
	}
}

// The member's connection is open, or unknown (the observer never saw it):
// it is carried over with its tasks, as before; the join gets none of them.
func TestTakeoverCarriesClassicProcessNotGone(t *testing.T) {
	for name, conn := range map[string]chan struct{}{"open": make(chan struct{}), "unknown": nil} {
		t.Run(name, func(t *testing.T) {
			w, c1, _, st := takeoverRoll(t, conn, nil)
			if resp := w.takeOver(st, "a1", c1.process.String()); resp.ErrorCode != 0 {
				t.Fatalf("takeover: %d", resp.ErrorCode)
			}
			g := w.h.group("g")
			if g.Members["c1"] == nil {
				t.Fatal("a classic member not gone from the wire was replaced")
			}
			if n := streams.TasksCount(g.Members["a1"].CurrentAssignment().Assigned.Active); n != 0 {
				t.Fatalf("a1 got %d tasks c1 still holds", n)
			}
		})
	}
}

// The other order (issue #41): the streams member of the stopped process
// joined, and took the group over, while the classic member's connection
// still looked open here (behind one address the close is told by the
// instance the member was connected to, and may come after the join). When
// the close arrives, the classic member is fenced at once, replaced by
// identity, not at its session expiry nor at a disconnect expiry (off
// here); the other process's member stays.
func TestTakeoverSuccessorJoinedBeforeTheClose(t *testing.T) {
	c1conn := make(chan struct{})
	w, c1, c2, st := takeoverRoll(t, c1conn, make(chan struct{}))
	if resp := w.takeOver(st, "a1", c1.process.String()); resp.ErrorCode != 0 {
		t.Fatalf("takeover: %d %v", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	if w.h.group("g").Members["c1"] == nil {
		t.Fatal("c1 replaced while its connection was open")
	}
	logs := captureLogs(w.h)
	c1.gone = true
	closeConn(t, w.h, c1conn)
	g := w.h.group("g")
	if g.Members["c1"] != nil {
		t.Fatal("the classic member of the successor's process is still in the group after its connection closed")
	}
	if g.Members["c2"] == nil || g.Members["a1"] == nil {
		t.Fatal("the close fenced a member of another process, or the successor")
	}
	logs.want(t, "info", "replaced by identity (process)")
	w.settleAll()
	total := len(c2.active)
	for _, s := range w.streams {
		total += streams.TasksCount(s.owned.Active)
	}
	if total != 6 {
		t.Fatalf("%d tasks active after settling, want 6", total)
	}
	w.h.checkReplay()
}

// A close of one member of a process whose other member is still connected
// (a live twin: a copied state directory) replaces nobody.
func TestTakeoverSuccessorJoinedBeforeTheCloseNotForTwin(t *testing.T) {
	c1conn, c2conn := make(chan struct{}), make(chan struct{})
	w, c1, _, st := takeoverRoll(t, c1conn, c2conn)
	// c2 shares c1's process id: the same process for the rule.
	st.Members[1].Info.ProcessID = st.Members[0].Info.ProcessID
	if resp := w.takeOver(st, "a1", c1.process.String()); resp.ErrorCode != 0 {
		t.Fatalf("takeover: %d %v", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	closeConn(t, w.h, c1conn)
	if w.h.group("g").Members["c1"] == nil {
		t.Fatal("a member was replaced while another member of its process is connected")
	}
}
