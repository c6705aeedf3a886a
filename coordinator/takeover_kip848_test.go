package coordinator

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// KIP-848's online consumer migration had bugs our classic → streams
// takeover has an analogue of (issue #41): member epoch 0 after a join
// (KAFKA-21581/21584), a stale target when the classic group rebalances
// (KAFKA-21582: migration/takeover_rebalancing_test.go), a classic
// assignment giving one partition to two members (KAFKA-21684). Each test
// names the guard it depends on.

// An empty classic group (generation 0 or a group whose members all left)
// has nothing to carry: the first streams join creates the group as any
// join does, at epoch 1 with an empty target, and its first real
// assignment is epoch 2 (Kafka 4.4, KAFKA-20268). No answer carries member
// epoch 0 after the join. Guard: Coordinator.takeOver's "empty classic
// group" branch; without it the takeover writes the classic generation 0 as
// the group epoch and the first target is at epoch 1.
func TestTakeoverOfEmptyClassicGroupEpochs(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	resp := w.takeOver(classicState(0), "s1", "ps")
	g := h.group("g")
	if resp.ErrorCode != 0 || resp.MemberEpoch != 2 || g.GroupEpoch != 2 || g.AssignmentEpoch != 2 {
		t.Fatalf("first join of an empty classic group: code %d member epoch %d, group epoch %d, assignment epoch %d; want 2, 2, 2",
			resp.ErrorCode, resp.MemberEpoch, g.GroupEpoch, g.AssignmentEpoch)
	}
	if n := streams.TasksCount(w.streams["s1"].owned.Active); n != 6 {
		t.Fatalf("s1 got %d tasks of an empty group, want 6", n)
	}
	for _, r := range h.log.All() {
		if v, ok := r.Value.(*streams.GroupMetadataValue); ok && v.Epoch < 1 {
			t.Fatalf("group epoch record %d written", v.Epoch)
		}
		if v, ok := r.Value.(*streams.CurrentMemberAssignmentValue); ok && v.MemberEpoch == 0 && v.State == streams.MemberStable && streams.TasksCount(v.Assigned.Active) > 0 {
			t.Fatalf("member %s holds tasks at member epoch 0", r.MemberID)
		}
	}
	// A second member's join: its answers never carry epoch 0 either.
	s2 := w.streamsJoin("s2", "p2", sourceTopology("foo"))
	for range 4 {
		for _, id := range []string{"s1", "s2"} {
			if r := w.streamsHeartbeat(id); r.MemberEpoch < 1 {
				t.Fatalf("%s answered at member epoch %d", id, r.MemberEpoch)
			}
		}
		h.advance(time.Second)
	}
	if s2.epoch < 3 || streams.TasksCount(s2.owned.Active) != 3 {
		t.Fatalf("s2 at epoch %d with %v", s2.epoch, s2.owned.Active)
	}
}

// A classic group with members at generation 0 is never Stable in Kafka
// (its first rebalance has not completed), so DescribeGroups refuses it
// already; the coordinator does not rely on that. Carried at generation 0,
// the classic members would hold member epoch 0, reserved for joins (the
// analogue of KAFKA-21581): the takeover waits (retriable) and writes
// nothing. At generation 1 it goes on, every epoch at least 1. Guard: the
// generation check in Change.TakeOverClassicGroup.
func TestTakeoverRefusesGenerationZeroMembers(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	c1 := w.newClassic("c1", "p1")
	c1.owned, c1.active = fooPartitions(0, 1, 2, 3, 4, 5), cTasks(0, 1, 2, 3, 4, 5)
	resp := w.takeOver(classicState(0, c1), "s1", "ps")
	if resp.ErrorCode != kerr.CoordinatorLoadInProgress.Code || h.group("g") != nil || len(h.log.All()) != 0 {
		t.Fatalf("takeover of members at generation 0: code %d %q, group %v, %d records", resp.ErrorCode, deref(resp.ErrorMessage), h.group("g") != nil, len(h.log.All()))
	}
	// Its member's session ran out already: nothing is carried, and the
	// group still starts at epoch 1, its first target at 2.
	expired := classicState(0, c1)
	expired.Members[0].LastHeartbeat = h.clock.Now().Add(-time.Minute)
	c1.gone = true
	if resp = w.takeOver(expired, "s1", "ps"); resp.ErrorCode != 0 || resp.MemberEpoch != 2 {
		t.Fatalf("takeover of generation 0 with its member expired: code %d %q, epoch %d", resp.ErrorCode, deref(resp.ErrorMessage), resp.MemberEpoch)
	}
	h = newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w = newWorld(t, h, "g")
	c1 = w.newClassic("c1", "p1")
	c1.owned, c1.active = fooPartitions(0, 1, 2, 3, 4, 5), cTasks(0, 1, 2, 3, 4, 5)
	resp = w.takeOver(classicState(1, c1), "s1", "ps")
	g := h.group("g")
	if resp.ErrorCode != 0 || resp.MemberEpoch != 2 || g.Members["c1"].MemberEpoch() != 1 {
		t.Fatalf("takeover at generation 1: code %d, s1 epoch %d, c1 epoch %d", resp.ErrorCode, resp.MemberEpoch, g.Members["c1"].MemberEpoch())
	}
	w.settleAll()
	for _, m := range g.Members {
		if m.MemberEpoch() < 1 {
			t.Fatalf("member %s at epoch %d", m.ID, m.MemberEpoch())
		}
	}
}

// doubleAssigned is state with member i's assignment of the generation
// also holding partitions ps of foo, encoded and decoded as the bytes of a
// SyncGroup answer (the AssignmentInfo through classicstreams' encoder).
func doubleAssigned(t *testing.T, st streams.ClassicGroupState, i int, ps ...int32) streams.ClassicGroupState {
	t.Helper()
	m := &st.Members[i]
	parts := append(slices.Clone(m.Assignment.AssignedPartitions), fooPartitions(ps...)...)
	slices.SortFunc(parts, func(a, b classicstreams.TopicPartition) int { return int(a.Partition - b.Partition) })
	ai := *m.AssignmentInfo
	ai.ActiveTasks = nil
	for _, p := range parts {
		ai.ActiveTasks = append(ai.ActiveTasks, classicstreams.TaskID{Partition: p.Partition})
	}
	userData, err := ai.Encode()
	if err != nil {
		t.Fatal(err)
	}
	raw := (&classicstreams.ConsumerAssignment{Version: 3, AssignedPartitions: parts, UserData: userData}).Encode()
	if m.Assignment, err = classicstreams.DecodeConsumerAssignment(raw); err != nil {
		t.Fatal(err)
	}
	if m.AssignmentInfo, err = classicstreams.DecodeAssignmentInfo(m.Assignment.UserData); err != nil {
		t.Fatal(err)
	}
	return st
}

// kindEvents records the events the coordinator tells.
type kindEvents struct {
	mu  sync.Mutex
	all []GroupEvent
}

func (e *kindEvents) GroupEvent(ev GroupEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *kindEvents) of(kind string) []GroupEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []GroupEvent
	for _, ev := range e.all {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// oneOwnerPerTask fails t if two members of g hold one active task
// (assigned or pending revocation), and returns the holders.
func oneOwnerPerTask(t *testing.T, g *streams.Group) map[streams.TaskID]string {
	t.Helper()
	holder := map[streams.TaskID]string{}
	for id, m := range g.Members {
		cur := m.CurrentAssignment()
		streams.ForEachTask(streams.TasksUnion(cur.Assigned.Active, cur.PendingRevocation.Active), func(task streams.TaskID) {
			if o, dup := holder[task]; dup {
				t.Fatalf("task %s_%d held by %s and %s", task.Subtopology, task.Partition, o, id)
			}
			holder[task] = id
		})
	}
	return holder
}

// The analogue of KAFKA-21684: the classic leader's last assignment gives
// task 0_2 to c1 and c2. KIP-848's migration threw IllegalStateException
// (UNKNOWN_SERVER_ERROR, the group classic forever); streamshift answered
// STREAMS_INVALID_TOPOLOGY, fatal to the streams member, same end. The
// takeover now keeps the task on c1, which owned it when it joined this
// generation (its state is there), takes it from c2, logs a warning with
// the event classic-double-active, and the group converges with every task
// held once. Guard: resolveDoubleActives (classic_double_active.go).
func TestTakeoverResolvesDoubleActiveTask(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	c1, c2 := w.newClassic("c1", "p1"), w.newClassic("c2", "p2")
	c1.owned, c1.active = fooPartitions(0, 1, 2), cTasks(0, 1, 2)
	c2.owned, c2.active = fooPartitions(3, 4, 5), cTasks(3, 4, 5)
	st := doubleAssigned(t, classicState(9, c1, c2), 1, 2)
	logs := captureLogs(h)
	ev := &kindEvents{}
	h.c.events = ev
	resp := w.takeOver(st, "s1", "ps")
	if resp.ErrorCode != 0 {
		t.Fatalf("takeover of a double assignment: %d %q", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	g := h.group("g")
	holder := oneOwnerPerTask(t, g)
	if holder[streams.TaskID{Subtopology: "0", Partition: 2}] != "c1" || len(holder) != 6 {
		t.Fatalf("after the takeover: %v, want 0_2 on c1 and every task held", holder)
	}
	line := logs.want(t, "warn", "gives active task 0_2 to 2 members")
	if line.str("task") != "0_2" || !strings.Contains(line.str("message"), "keeps it on c1 (it owned the task") {
		t.Fatalf("warning %v", line)
	}
	if got := ev.of(streams.EventClassicDoubleActive); len(got) != 1 || got[0].Fields["task"] != "0_2" {
		t.Fatalf("classic-double-active events %+v", got)
	}
	// The observer's state is not changed: a retry reads it again.
	if len(st.Members[1].Assignment.AssignedPartitions) != 4 {
		t.Fatal("the takeover changed its input")
	}
	// c2 applied its SyncGroup answer of generation 9: it owns foo-2 too
	// (the model's active lists stay apart for world.check) and runs 0_2
	// until it rejoins; its next heartbeat tells it to.
	c2.owned = append(c2.owned, fooPartitions(2)...)
	if !c2.mustRejoin() {
		t.Fatal("c2's heartbeat after the takeover did not ask it to rejoin")
	}
	c2.rebalance()
	if slices.Contains(c2.owned, classicstreams.TopicPartition{Topic: "foo", Partition: 2}) {
		t.Fatalf("c2 owns %v after its rejoin, foo-2 is c1's", c2.owned)
	}
	for round := 0; round < 6; round++ {
		for _, c := range []*classicClient{c1, c2} {
			if c.mustRejoin() {
				c.rebalance()
			}
		}
		w.streamsHeartbeat("s1")
		oneOwnerPerTask(t, g)
		h.advance(time.Second)
	}
	n1, n2, ns := len(c1.active), len(c2.active), streams.TasksCount(w.streams["s1"].owned.Active)
	if n1+n2+ns != 6 || ns == 0 || g.State() != streams.GroupStable {
		t.Fatalf("after settling: c1 %d c2 %d s1 %d, state %v", n1, n2, ns, g.State())
	}
}

// Both members owned the task when they joined (the double run had
// already started a generation earlier): the smallest member id keeps it,
// and the other is not held as revoking it (that would be a task revoked
// by one member and held by another, which the takeover retries forever).
func TestTakeoverResolvesDoubleActiveBothOwned(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	c1, c2 := w.newClassic("c1", "p1"), w.newClassic("c2", "p2")
	c1.owned, c1.active = fooPartitions(0, 1, 2), cTasks(0, 1, 2)
	c2.owned, c2.active = fooPartitions(3, 4, 5), cTasks(3, 4, 5)
	st := doubleAssigned(t, classicState(9, c2, c1), 0, 2)
	st.Members[0].Subscription.OwnedPartitions = append(st.Members[0].Subscription.OwnedPartitions, fooPartitions(2)...)
	logs := captureLogs(h)
	resp := w.takeOver(st, "s1", "ps")
	if resp.ErrorCode != 0 {
		t.Fatalf("takeover: %d %q", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	g := h.group("g")
	if holder := oneOwnerPerTask(t, g); holder[streams.TaskID{Subtopology: "0", Partition: 2}] != "c1" {
		t.Fatalf("0_2 on %q, want c1", holder[streams.TaskID{Subtopology: "0", Partition: 2}])
	}
	if cur := g.Members["c2"].CurrentAssignment(); cur.State != streams.MemberStable {
		t.Fatalf("c2 %+v, want stable and not revoking", cur)
	}
	logs.want(t, "warn", "keeps it on c1 (the smallest member id)")
}

// A static classic member (group.instance.id) stopped in a rolling step
// is replaced at the takeover by the static streams member of the same
// instance id (Kafka's static replacement, across protocols): the streams
// member holds its tasks at once, the classic member is not carried. And
// back: the static streams member stopped (a 4.4 static member leaves
// with epoch -2 and keeps its tasks) is replaced by the classic member of
// the same instance id, which gets them at once; the streams member's
// later heartbeat is fenced with FENCED_INSTANCE_ID. No task is ever active
// on two members (world.check).
func TestTakeoverStaticClassicReplacedAndBack(t *testing.T) {
	c1conn := make(chan struct{})
	w, c1, c2, st := takeoverRoll(t, c1conn, make(chan struct{}))
	c1.instance, st.Members[0].InstanceID = "inst-1", "inst-1"
	c1.gone = true
	close(c1conn)
	held := activeSet(c1.active)
	first := joinReq("g", "a1", "pA2", sourceTopology("foo"))
	first.InstanceID = strp("inst-1")
	var resp *kmsg.StreamsGroupHeartbeatResponse
	w.h.c.TakeOverClassicGroup(st, first, streams.ClientInfo{ClientID: "a1", ClientHost: "/127.0.0.1"}, func(r HeartbeatResult) { resp = r.Response })
	w.h.checkReplay()
	if resp.ErrorCode != 0 {
		t.Fatalf("takeover by the static streams member: %d %q", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	a1 := &streamsClient{id: "a1", process: "pA2"}
	w.streams["a1"] = a1
	a1.apply(resp)
	w.check()
	g := w.h.group("g")
	if g.Members["c1"] != nil || g.StaticMembers["inst-1"] != "a1" {
		t.Fatalf("c1 carried %v, inst-1 owned by %q", g.Members["c1"] != nil, g.StaticMembers["inst-1"])
	}
	if !streams.TasksEqual(g.Members["a1"].CurrentAssignment().Assigned.Active, held) {
		t.Fatalf("a1 holds %v, c1 held %v", g.Members["a1"].CurrentAssignment().Assigned.Active, held)
	}
	if err := heartbeatAs(w, "c1", "inst-1", 22); !errors.Is(err, kerr.FencedInstanceID) {
		t.Fatalf("the replaced classic member's heartbeat: %v", err)
	}
	w.settleAll()

	// Back: a1 leaves as a 4.4 static member does on close (epoch -2),
	// keeping its tasks for its successor.
	aHeld := g.Members["a1"].CurrentAssignment().Assigned.Active
	leave := hbReq("g", "a1", -2, nil)
	leave.InstanceID = strp("inst-1")
	if r := w.h.hb(leave); r.ErrorCode != 0 {
		t.Fatalf("a1's static leave: %d", r.ErrorCode)
	}
	delete(w.streams, "a1")
	c3 := w.newClassic("c3", "pA3")
	c3.instance = "inst-1"
	c3.conn = make(chan struct{})
	if j := c3.join(); j.Err != nil {
		t.Fatalf("classic join over the released static streams member: %v", j.Err)
	}
	if g.Members["a1"] != nil || g.StaticMembers["inst-1"] != "c3" {
		t.Fatalf("a1 kept %v, inst-1 owned by %q", g.Members["a1"] != nil, g.StaticMembers["inst-1"])
	}
	if got := g.Members["c3"].CurrentAssignment().Assigned.Active; !streams.TasksEqual(streams.TasksUnion(got, aHeld), got) {
		t.Fatalf("c3 holds %v, a1 held %v", got, aHeld)
	}
	r := w.h.hb(func() *kmsg.StreamsGroupHeartbeatRequest {
		q := hbReq("g", "a1", 0, nil)
		q.MemberEpoch = a1.epoch
		q.InstanceID = strp("inst-1")
		return q
	}())
	if r.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("a1's heartbeat after its replacement: %d", r.ErrorCode)
	}
	c3.rebalance()
	w.settleAll()
	for id, m := range g.Members {
		if !m.IsClassic() {
			t.Fatalf("streams member %s left after the step back", id)
		}
	}
	total := len(c2.active) + len(c3.active)
	if total != 6 {
		t.Fatalf("%d tasks active after the step back, want 6", total)
	}
}
