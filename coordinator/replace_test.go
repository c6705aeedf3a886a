package coordinator

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// Replacement by identity (coordinator/streams/replace.go, issue #28,
// docs/fast-roll.md §7 tests 1-5): a join whose process id (or instance id)
// is that of other-protocol members gone from the wire replaces them at once.

// rollGroup: streams member s1 (process ps) and the two classic members c1,
// c2 of process pA (one per stream thread), each on its own open connection,
// share the 6 tasks of "foo", all stable.
func rollGroup(t *testing.T) (*world, *classicClient, *classicClient) {
	t.Helper()
	return rollGroupOn(t, true)
}

// rollGroupOn is rollGroup; known false leaves the connections unknown.
func rollGroupOn(t *testing.T, known bool) (*world, *classicClient, *classicClient) {
	t.Helper()
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	w.streamsJoin("s1", "ps", sourceTopology("foo"))
	c1, c2 := w.newClassic("c1", "pA"), w.newClassic("c2", "pA")
	if known {
		c1.conn, c2.conn = make(chan struct{}), make(chan struct{})
	}
	w.settleAll()
	if len(c1.active) == 0 || len(c2.active) == 0 {
		t.Fatalf("classic members hold %v and %v", c1.active, c2.active)
	}
	return w, c1, c2
}

// settleAll runs every live client until none has anything left to do.
func (w *world) settleAll() {
	w.t.Helper()
	for range 6 {
		for id, c := range w.classic {
			if c.gone {
				continue
			}
			if !c.joined || c.mustRejoin() {
				c.rebalance()
			}
			_ = id
		}
		for id := range w.streams {
			w.streamsHeartbeat(id)
		}
	}
}

// streamsJoinOn joins a streams member on connection conn (nil: unknown).
func (w *world) streamsJoinOn(id, process, instance string, conn chan struct{}) (*streamsClient, *kmsg.StreamsGroupHeartbeatResponse) {
	w.t.Helper()
	req := joinReq(w.group, id, process, sourceTopology("foo"))
	if instance != "" {
		req.InstanceID = &instance
	}
	var closed <-chan struct{}
	if conn != nil {
		closed = conn
	}
	var resp *kmsg.StreamsGroupHeartbeatResponse
	w.h.c.StreamsGroupHeartbeat(req, streams.ClientInfo{ClientID: id, ClientHost: "/127.0.0.1", Closed: closed}, func(r *kmsg.StreamsGroupHeartbeatResponse) { resp = r })
	w.h.checkReplay()
	if resp.ErrorCode != 0 {
		return nil, resp
	}
	s := &streamsClient{id: id, process: process, conn: conn}
	w.streams[id] = s
	s.apply(resp)
	w.check()
	return s, resp
}

func activeSet(ts ...[]classicstreams.TaskID) streams.Tasks {
	b := streams.TasksBuilder{}
	for _, l := range ts {
		for _, t := range l {
			b.Add("0", t.Partition)
		}
	}
	return b.Build()
}

// firstCurrent is the first current assignment record of member id in recs.
func firstCurrent(t *testing.T, recs []streams.Record, id string) *streams.CurrentMemberAssignmentValue {
	t.Helper()
	for _, r := range recs {
		if r.Type == streams.RecordCurrentMemberAssignment && r.MemberID == id && !r.Tombstone() {
			return r.Value.(*streams.CurrentMemberAssignmentValue)
		}
	}
	t.Fatalf("no current assignment record of %s", id)
	return nil
}

// timersOf lists the group's armed timers of member id.
func timersOf(h *harness, id string) []string {
	var out []string
	s := h.queue("g")
	for k := range s.timers {
		if n := k.Name("g"); strings.HasSuffix(n, "-"+id) {
			out = append(out, n)
		}
	}
	return out
}

// Test 1: both classic members of process pA stopped (connections closed);
// the streams join of pA replaces both in its one change, holds their union
// at once, with one group epoch bump, and nothing is active twice at any
// step; their timers are gone.
func TestReplaceClassicProcessByStreamsJoin(t *testing.T) {
	w, c1, c2 := rollGroup(t)
	h := w.h
	g := h.group("g")
	union := activeSet(c1.active, c2.active)
	epoch := g.GroupEpoch
	logs := captureLogs(h)
	c1.gone, c2.gone = true, true
	close(c1.conn)
	close(c2.conn)

	a1, resp := w.streamsJoinOn("a1", c1.process.String(), "", make(chan struct{}))
	if a1 == nil {
		t.Fatalf("join: %d %v", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	if g.Members["c1"] != nil || g.Members["c2"] != nil {
		t.Fatal("the stopped classic members are still in the group")
	}
	if g.GroupEpoch != epoch+1 {
		t.Fatalf("group epoch %d -> %d, want one bump", epoch, g.GroupEpoch)
	}
	// In the join's one change every task of the stopped process became
	// the new member's (its first current assignment, at epoch 0) before
	// the heartbeat reconciled it towards the new target; it keeps what
	// the target leaves it.
	first := firstCurrent(t, h.log.last(), "a1")
	if first.MemberEpoch != 0 || !streams.TasksEqual(first.Assigned.Active, union) {
		t.Fatalf("a1 first written with %v at epoch %d, the stopped members held %v", first.Assigned.Active, first.MemberEpoch, union)
	}
	cur := g.Members["a1"].CurrentAssignment()
	if streams.TasksCount(cur.Assigned.Active) == 0 || !streams.TasksEqual(streams.TasksUnion(cur.Assigned.Active, union), union) {
		t.Fatalf("a1 holds %v, the stopped members held %v", cur.Assigned.Active, union)
	}
	for _, id := range []string{"c1", "c2"} {
		if ts := timersOf(h, id); len(ts) > 0 {
			t.Fatalf("timers of %s left: %v", id, ts)
		}
	}
	line := logs.want(t, "info", "Created a new member a1 to replace them (replaced by identity (process))")
	wantFields(t, line, map[string]string{"member": "a1", "key": "process", "reason": "replaced by identity (process)"})
	w.settleAll()
	total := 0
	for _, s := range w.streams {
		total += streams.TasksCount(s.owned.Active)
	}
	if total != 6 {
		t.Fatalf("%d tasks active after settling, want 6", total)
	}
}

// Test 2: one of the two old connections still open: the process is not
// gone, nothing is replaced, the join is an ordinary new member and gets
// nothing a live member holds.
func TestReplaceNotWhileOneConnectionOpen(t *testing.T) {
	w, c1, c2 := rollGroup(t)
	g := w.h.group("g")
	close(c1.conn)
	a1, resp := w.streamsJoinOn("a1", c1.process.String(), "", make(chan struct{}))
	if a1 == nil {
		t.Fatalf("join: %d %v", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	if g.Members["c1"] == nil || g.Members["c2"] == nil {
		t.Fatal("a member of a process with a connection open was replaced")
	}
	if n := streams.TasksCount(g.Members["a1"].CurrentAssignment().Assigned.Active); n != 0 {
		t.Fatalf("a1 got %d tasks still held by c1 and c2", n)
	}
	_ = c2
}

// A process id reused by a live member (a copied state directory): both
// old connections open, nothing is replaced, a warning names the process.
func TestReplaceNotForLiveTwin(t *testing.T) {
	w, c1, _ := rollGroup(t)
	g := w.h.group("g")
	logs := captureLogs(w.h)
	if a1, resp := w.streamsJoinOn("a1", c1.process.String(), "", make(chan struct{})); a1 == nil {
		t.Fatalf("join: %d %v", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	if g.Members["c1"] == nil || g.Members["c2"] == nil {
		t.Fatal("live twin replaced")
	}
	logs.want(t, "warn", "A copied state directory?")
	// Connections never known (nil: after a failover, say) count as open.
	w2, d1, d2 := rollGroupOn(t, false)
	d1.gone, d2.gone = true, true
	logs2 := captureLogs(w2.h)
	if a2, _ := w2.streamsJoinOn("a2", d1.process.String(), "", nil); a2 == nil || w2.h.group("g").Members["c1"] == nil {
		t.Fatal("replaced over connections not known to be closed")
	}
	// Unknown is not known to be live: no warning about a copy.
	if n := len(logs2.find(t, "warn", "A copied state directory?")); n != 0 {
		t.Fatalf("%d copy warnings for members whose connections are unknown", n)
	}
}

// Test 3: the other direction. A streams member of process pB stopped
// without leaving (kill -9: its connection closed); the classic join of pB
// replaces it, after which the group is classic-only (the hand-back may
// start without waiting for a session).
func TestReplaceStreamsProcessByClassicJoin(t *testing.T) {
	w, _, _ := rollGroup(t)
	h := w.h
	g := h.group("g")
	var pB classicstreams.ProcessID
	copy(pB[:], "pB              ")
	b1conn := make(chan struct{})
	// s1 goes; b1, a streams member of pB, comes and settles.
	s1 := w.streams["s1"]
	h.ok(hbReq("g", "s1", streams.LeaveGroupMemberEpoch, nil))
	delete(w.streams, "s1")
	_ = s1
	if b1, resp := w.streamsJoinOn("b1", pB.String(), "", b1conn); b1 == nil {
		t.Fatalf("join: %d %v", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	w.settleAll()
	held := g.Members["b1"].CurrentAssignment().Assigned.Active
	if streams.TasksCount(held) == 0 {
		t.Fatal("b1 holds nothing")
	}
	only := func() bool {
		var got bool
		h.c.ClassicOnly("g", func(b bool) { got = b })
		return got
	}
	if only() {
		t.Fatal("classic-only with b1 in the group")
	}
	close(b1conn)
	w.streams["b1"].owned = streams.TaskSets{} // the stopped instance runs nothing
	c3 := w.newClassic("c3", "pB")
	c3.process = pB
	c3.conn = make(chan struct{})
	if j := c3.join(); j.Err != nil {
		t.Fatalf("c3 join: %v", j.Err)
	}
	if g.Members["b1"] != nil {
		t.Fatal("b1 not replaced")
	}
	if first := firstCurrent(t, h.log.last(), "c3"); !streams.TasksEqual(first.Assigned.Active, held) {
		t.Fatalf("c3 first written with %v, b1 held %v", first.Assigned.Active, held)
	}
	if !only() {
		t.Fatal("not classic-only after the replacement")
	}
	// Test 5, streams side: the replaced member's requests.
	r := h.hb(hbReq("g", "b1", w.streams["b1"].epoch, nil))
	if r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("b1 heartbeat: %d", r.ErrorCode)
	}
	delete(w.streams, "b1")
	for _, txn := range []bool{false, true} {
		res := streams.ValidateOffsetCommit(g, streams.OffsetCommitRequest{GroupID: "g", MemberID: "b1", MemberEpoch: 1, Transactional: txn, Version: 9,
			Partitions: []streams.CommitPartition{{Topic: "foo", Partition: 0}}})
		if !errors.Is(res.Err, kerr.UnknownMemberID) {
			t.Fatalf("b1 commit (txn %v): %v", txn, res.Err)
		}
	}
	w.settleAll()
}

// Test 5, classic side: what the replaced classic members are answered.
func TestReplacedClassicMemberAnswers(t *testing.T) {
	w, c1, c2 := rollGroup(t)
	g := w.h.group("g")
	c1.gone, c2.gone = true, true
	close(c1.conn)
	close(c2.conn)
	if a1, resp := w.streamsJoinOn("a1", c1.process.String(), "", make(chan struct{})); a1 == nil {
		t.Fatalf("join: %d %v", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	if err := heartbeatAs(w, "c1", "", c1.generation); !errors.Is(err, kerr.UnknownMemberID) {
		t.Fatalf("c1 heartbeat: %v", err)
	}
	pt, pn := streams.ClassicProtocolType, streams.ClassicProtocolName
	var sres streams.ClassicSyncResult
	w.h.c.ClassicSyncGroup(streams.ClassicSyncRequest{GroupID: "g", MemberID: "c2", Generation: c2.generation, ProtocolType: &pt, ProtocolName: &pn}, func(r streams.ClassicSyncResult) { sres = r })
	if !errors.Is(sres.Err, kerr.UnknownMemberID) {
		t.Fatalf("c2 sync: %v", sres.Err)
	}
	for _, txn := range []bool{false, true} {
		r := streams.ValidateClassicOffsetCommit(g, streams.OffsetCommitRequest{GroupID: "g", MemberID: "c1", MemberEpoch: c1.generation, Transactional: txn,
			Partitions: []streams.CommitPartition{{Topic: "foo", Partition: c1.owned[0].Partition}}})
		if !errors.Is(r.Err, kerr.UnknownMemberID) {
			t.Fatalf("c1 commit (txn %v): %v", txn, r.Err)
		}
	}
}

// Test 4: instance ids across protocols. A streams join reusing a live
// classic static member's instance id replaces it at once (Kafka's classic
// rule; before #28 UNRELEASED_INSTANCE_ID); its later requests get
// FENCED_INSTANCE_ID. A classic join reusing a streams static member's
// instance id waits for its connection to close.
func TestReplaceByInstanceID(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	w.streamsJoin("s1", "ps", sourceTopology("foo"))
	c1 := w.newClassic("c1", "pA")
	c1.instance = "inst-1"
	c1.conn = make(chan struct{})
	w.settleAll()
	g := h.group("g")
	held := activeSet(c1.active)
	if streams.TasksCount(held) == 0 {
		t.Fatal("c1 holds nothing")
	}
	// The connection stays open: the classic rule needs no guard.
	c1.gone = true
	a1, resp := w.streamsJoinOn("a1", "another-process", "inst-1", make(chan struct{}))
	if a1 == nil {
		t.Fatalf("streams join over the classic instance: %d %v", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	if g.Members["c1"] != nil || g.StaticMembers["inst-1"] != "a1" || g.Members["a1"].IsClassic() {
		t.Fatalf("c1 kept %v, inst-1 owned by %q", g.Members["c1"] != nil, g.StaticMembers["inst-1"])
	}
	cur := g.Members["a1"].CurrentAssignment()
	if !streams.TasksEqual(streams.TasksUnion(cur.Assigned.Active, held), held) || streams.TasksCount(cur.Assigned.Active) == 0 {
		t.Fatalf("a1 holds %v, c1 held %v", cur.Assigned.Active, held)
	}
	if err := heartbeatAs(w, "c1", "inst-1", c1.generation); !errors.Is(err, kerr.FencedInstanceID) {
		t.Fatalf("c1 heartbeat: %v", err)
	}
	w.settleAll()

	// Back: a classic join with a1's instance id while a1 is connected.
	aconn := make(chan struct{})
	h.c.StreamsGroupHeartbeat(hbReq("g", "a1", w.streams["a1"].epoch, &w.streams["a1"].owned), streams.ClientInfo{Closed: aconn}, func(*kmsg.StreamsGroupHeartbeatResponse) {})
	c2 := w.newClassic("c2", "pC")
	c2.instance = "inst-1"
	c2.conn = make(chan struct{})
	if j := c2.join(); !errors.Is(j.Err, kerr.UnreleasedInstanceID) {
		t.Fatalf("classic join over a live streams owner: %v", j.Err)
	}
	close(aconn)
	w.streams["a1"].owned = streams.TaskSets{}
	aHeld := g.Members["a1"].CurrentAssignment().Assigned.Active
	if j := c2.join(); j.Err != nil {
		t.Fatalf("classic join over a gone streams owner: %v", j.Err)
	}
	if g.Members["a1"] != nil || g.StaticMembers["inst-1"] != "c2" {
		t.Fatal("a1 not replaced")
	}
	if first := firstCurrent(t, h.log.last(), "c2"); !streams.TasksEqual(first.Assigned.Active, aHeld) {
		t.Fatalf("c2 first written with %v, a1 held %v", first.Assigned.Active, aHeld)
	}
	r := h.hb(func() *kmsg.StreamsGroupHeartbeatRequest {
		q := hbReq("g", "a1", w.streams["a1"].epoch, nil)
		q.InstanceID = strp("inst-1")
		return q
	}())
	if r.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("a1 heartbeat: %d", r.ErrorCode)
	}
	delete(w.streams, "a1")
	w.settleAll()
}
