package coordinator

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// classicState is the upstream classic group at generation gen: each client
// with what it holds (its last SyncGroup), as the takeover reads it.
func classicState(gen int32, clients ...*classicClient) streams.ClassicGroupState {
	st := streams.ClassicGroupState{GroupID: "g", Generation: gen}
	for _, c := range clients {
		c.generation = gen
		c.joined = true
		sub, info := c.subscription()
		ai := &classicstreams.AssignmentInfo{Version: 11, CommonlySupportedVersion: 11, ActiveTasks: slices.Clone(c.active)}
		st.Members = append(st.Members, streams.ClassicMemberState{
			MemberID: c.id, InstanceID: c.instance, Client: streams.ClientInfo{ClientID: c.id, ClientHost: "/127.0.0.1"},
			SessionTimeoutMs: 10000, RebalanceTimeoutMs: 60000,
			Subscription: sub, Info: info,
			Assignment:     &classicstreams.ConsumerAssignment{Version: 3, AssignedPartitions: slices.Clone(c.owned)},
			AssignmentInfo: ai,
		})
	}
	return st
}

func (w *world) takeOver(st streams.ClassicGroupState, id, process string) *kmsg.StreamsGroupHeartbeatResponse {
	w.t.Helper()
	s := &streamsClient{id: id, process: process}
	w.streams[id] = s
	var resp *kmsg.StreamsGroupHeartbeatResponse
	w.h.c.TakeOverClassicGroup(st, joinReq("g", id, process, sourceTopology("foo")), streams.ClientInfo{ClientID: "client-" + id, ClientHost: "/127.0.0.1"}, func(r HeartbeatResult) {
		resp = r.Response
		w.h.create("g", r.CreatableTopics)
	})
	w.h.checkReplay()
	if resp.ErrorCode == 0 {
		s.apply(resp)
	} else {
		delete(w.streams, id)
	}
	w.check()
	return resp
}

// The KIP's example at small scale: a classic group at generation 22 with
// two members is taken over by the first streams member. Classic members
// keep their tasks and generation (commits accepted), are pulled in by
// Heartbeat REBALANCE_IN_PROGRESS only, revoke cooperatively, and the
// group ends balanced with no task ever active twice.
func TestTakeOverClassicGroup(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	c1, c2 := w.newClassic("c1", "p1"), w.newClassic("c2", "p2")
	c1.owned, c1.active = fooPartitions(0, 1, 2), cTasks(0, 1, 2)
	c2.owned, c2.active = fooPartitions(3, 4, 5), cTasks(3, 4, 5)
	resp := w.takeOver(classicState(22, c1, c2), "s1", "ps")
	g := h.group("g")
	if resp.ErrorCode != 0 || g.GroupEpoch != 23 || g.Members["c1"].MemberEpoch() != 22 {
		t.Fatalf("takeover: %d epoch %d c1 %d", resp.ErrorCode, g.GroupEpoch, g.Members["c1"].MemberEpoch())
	}
	if streams.TasksCount(w.streams["s1"].owned.Active) != 0 {
		t.Fatalf("s1 got tasks the classic members hold: %v", w.streams["s1"].owned.Active)
	}
	if g.Ownership == nil || g.Ownership.Source != streams.OwnershipTakeover {
		t.Fatalf("ownership %+v", g.Ownership)
	}
	// The status page's lag: each member's offset sums of its last upstream
	// JoinGroup (three running active tasks), sent when is not known.
	if r := g.Members["c1"].Report; len(r.ClassicSums) != 3 || r.ClassicSums[0].Offset != classicstreams.OffsetSumRunningActive || !r.At.IsZero() {
		t.Fatalf("c1's offset report after the takeover: %+v", r)
	}
	// The same join run again by the normal path (the ownership claim
	// flow joins after the takeover hook) changes nothing.
	if r := h.ok(joinReq("g", "s1", "ps", sourceTopology("foo"))); r.MemberEpoch != 23 || g.GroupEpoch != 23 {
		t.Fatalf("repeated join: epoch %d group %d", r.MemberEpoch, g.GroupEpoch)
	}
	// Commits in flight at the takeover carry generation 22: accepted.
	for _, c := range []*classicClient{c1, c2} {
		if r := streams.ValidateClassicOffsetCommit(g, streams.OffsetCommitRequest{GroupID: "g", MemberID: c.id, MemberEpoch: 22}); r.Err != nil {
			t.Fatalf("%s commit at generation 22: %v", c.id, r.Err)
		}
	}
	for round := 0; round < 6; round++ {
		for _, c := range []*classicClient{c1, c2} {
			if c.mustRejoin() {
				c.rebalance()
			}
		}
		w.streamsHeartbeat("s1")
		h.advance(time.Second)
	}
	n1, n2, ns := len(c1.active), len(c2.active), streams.TasksCount(w.streams["s1"].owned.Active)
	if n1 != 2 || n2 != 2 || ns != 2 || g.State() != streams.GroupStable {
		t.Fatalf("after the takeover: c1 %d c2 %d s1 %d, state %v", n1, n2, ns, g.State())
	}
}

// A takeover that cannot be checked leaves nothing behind: the group stays
// classic upstream and the streams member is told why, with Kafka's fatal
// answer to a topology it cannot take (no retry changes the classic
// members' tasks).
func TestTakeOverRefusesUnknownTasks(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	h.md.SetTopic("bar", 2)
	w := newWorld(t, h, "g")
	c1 := w.newClassic("c1", "p1")
	c1.owned, c1.active = []classicstreams.TopicPartition{{Topic: "bar", Partition: 0}}, cTasks(0)
	resp := w.takeOver(classicState(5, c1), "s1", "ps")
	if resp.ErrorCode != kerr.StreamsInvalidTopology.Code || h.group("g") != nil || len(h.log.All()) != 0 || !strings.Contains(deref(resp.ErrorMessage), "bar") {
		t.Fatalf("takeover with an unknown partition: %d group %v records %d", resp.ErrorCode, h.group("g") != nil, len(h.log.All()))
	}
	// Nor over a group already here.
	c1.gone = true // the classic app stays upstream
	w.streamsJoin("s0", "p0", sourceTopology("foo"))
	resp = w.takeOver(classicState(5), "s1", "ps")
	if !errors.Is(kerr.ErrorForCode(resp.ErrorCode), kerr.GroupIDNotFound) {
		t.Fatalf("takeover of a streams group: %d", resp.ErrorCode)
	}
}

// A takeover that fails upstream afterwards is undone: nothing of the group
// remains here.
func TestAbandonTakeOver(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	c1 := w.newClassic("c1", "p1")
	c1.owned, c1.active = fooPartitions(0, 1, 2, 3, 4, 5), cTasks(0, 1, 2, 3, 4, 5)
	if resp := w.takeOver(classicState(7, c1), "s1", "ps"); resp.ErrorCode != 0 {
		t.Fatalf("takeover: %d", resp.ErrorCode)
	}
	var err error
	h.c.AbandonTakeOver("g", func(e error) { err = e })
	if err != nil || h.group("g") != nil {
		t.Fatalf("abandon: %v", err)
	}
	gs, rerr := streams.Replay(nil, h.log.All())
	if rerr != nil || gs["g"] != nil {
		t.Fatalf("replay after abandon: %v %v", rerr, gs["g"])
	}
}

// A takeover carries each classic member's session clock over from the
// upstream: c2 stopped 8 s (of its 10 s session) before the takeover and is
// fenced 2 s after it, at its last heartbeat + session timeout, not a whole
// session after the takeover; c3's session ran out before the takeover, so
// it is not carried over at all and its tasks are free at once. c1, alive,
// is never fenced, and no task is ever active twice.
func TestTakeOverKeepsClassicSessionClocks(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	c1, c2, c3 := w.newClassic("c1", "p1"), w.newClassic("c2", "p2"), w.newClassic("c3", "p3")
	c1.owned, c1.active = fooPartitions(0, 1), cTasks(0, 1)
	c2.owned, c2.active = fooPartitions(2, 3), cTasks(2, 3)
	c3.owned, c3.active = fooPartitions(4, 5), cTasks(4, 5)
	st := classicState(9, c1, c2, c3)
	now := h.c.Now()
	st.Members[0].LastHeartbeat = now.Add(-time.Second)
	st.Members[1].LastHeartbeat = now.Add(-8 * time.Second)
	st.Members[2].LastHeartbeat = now.Add(-11 * time.Second)
	c2.gone, c3.gone = true, true

	if resp := w.takeOver(st, "s1", "ps"); resp.ErrorCode != 0 {
		t.Fatalf("takeover: %d %s", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	g := h.group("g")
	if g.Members["c3"] != nil || g.Members["c1"] == nil || g.Members["c2"] == nil {
		t.Fatalf("members after the takeover: %v (c3's session had run out)", streams.SortedMemberIDs(g))
	}
	// c3's tasks go to the streams member without waiting for anyone.
	w.streamsHeartbeat("s1")
	if got := w.streams["s1"].owned.Active; !streams.TasksEqual(got, tasks("0", 4, 5)) {
		t.Fatalf("s1 active %v, want c3's tasks 4 and 5", got)
	}

	step := 500 * time.Millisecond
	for elapsed := time.Duration(0); elapsed < 12*time.Second; elapsed += step {
		if c1.mustRejoin() {
			c1.rebalance()
		}
		w.streamsHeartbeat("s1")
		h.advance(step)
		fenced := h.group("g").Members["c2"] == nil
		switch at := elapsed + step; {
		case at < 2*time.Second && fenced:
			t.Fatalf("c2 fenced %v after the takeover, before its upstream session ran out (2 s)", at)
		case at >= 2*time.Second && !fenced:
			t.Fatalf("c2 still a member %v after the takeover: its session restarted at the takeover", at)
		}
	}
	w.settleStreams("s1")
	if c1.mustRejoin() {
		c1.rebalance()
	}
	if n1, ns := len(c1.active), streams.TasksCount(w.streams["s1"].owned.Active); n1+ns != 6 || h.group("g").Members["c1"] == nil {
		t.Fatalf("after c2's session: c1 %v s1 %v", c1.active, w.streams["s1"].owned.Active)
	}
}

// takeOverWith runs the takeover of st by member s1 joining with topo.
func (h *harness) takeOverWith(st streams.ClassicGroupState, topo *kmsg.StreamsGroupHeartbeatRequestTopology) *kmsg.StreamsGroupHeartbeatResponse {
	h.t.Helper()
	var resp *kmsg.StreamsGroupHeartbeatResponse
	h.c.TakeOverClassicGroup(st, joinReq("g", "s1", "ps", topo), streams.ClientInfo{ClientID: "client-s1", ClientHost: "/127.0.0.1"}, func(r HeartbeatResult) {
		resp = r.Response
		h.create("g", r.CreatableTopics)
	})
	h.checkReplay()
	return resp
}

func hasStatus(resp *kmsg.StreamsGroupHeartbeatResponse, code int8) bool {
	return slices.ContainsFunc(resp.Status, func(s kmsg.StreamsGroupHeartbeatResponseStatus) bool { return s.StatusCode == code })
}

// Internal topics gone (deleted, or a store new in this version) do not stop
// a takeover: they are created as for a Kafka 4.4 join, the streams member
// waits with status MISSING_INTERNAL_TOPICS, and the group goes on once
// they exist. (Before: "the topology is not ready, the classic tasks cannot
// be checked" on every attempt.)
func TestTakeOverCreatesMissingInternalTopics(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	c1 := w.newClassic("c1", "p1")
	c1.owned, c1.active = fooPartitions(0, 1, 2, 3, 4, 5), cTasks(0, 1, 2, 3, 4, 5)
	resp := h.takeOverWith(classicState(9, c1), statefulTopology("foo"))
	if resp.ErrorCode != 0 || !hasStatus(resp, streams.StatusMissingInternalTopics) || resp.MemberEpoch != 10 {
		t.Fatalf("takeover with a missing changelog: code %d %s status %+v epoch %d", resp.ErrorCode, deref(resp.ErrorMessage), resp.Status, resp.MemberEpoch)
	}
	g := h.group("g")
	if g == nil || g.Members["c1"] == nil {
		t.Fatal("the classic member was not carried over")
	}
	h.creator.mu.Lock()
	calls, dones := h.creator.calls, h.creator.dones
	h.creator.mu.Unlock()
	if len(calls) != 1 || len(calls[0]) != 1 || calls[0][0].Name != "app-store-changelog" || calls[0][0].Partitions != 6 {
		t.Fatalf("topics asked for: %+v", calls)
	}
	// Created: the next heartbeat finds the topology ready.
	h.md.SetTopic("app-store-changelog", 6)
	dones[0](nil)
	req := joinReq("g", "s1", "ps", nil)
	req.MemberEpoch = resp.MemberEpoch
	req.Topology = nil
	r := h.ok(req)
	if hasStatus(r, streams.StatusMissingInternalTopics) {
		t.Fatalf("status after the creation: %+v", r.Status)
	}
}

// Internal topics with the wrong partition count never fix themselves: the
// takeover is refused with Kafka's status named, fatal for the streams
// member, and nothing is left here.
func TestTakeOverRefusesIncorrectlyPartitionedTopics(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	h.md.SetTopic("app-store-changelog", 2)
	w := newWorld(t, h, "g")
	c1 := w.newClassic("c1", "p1")
	c1.owned, c1.active = fooPartitions(0, 1, 2, 3, 4, 5), cTasks(0, 1, 2, 3, 4, 5)
	resp := h.takeOverWith(classicState(9, c1), statefulTopology("foo"))
	if resp.ErrorCode != kerr.StreamsInvalidTopology.Code || !strings.Contains(deref(resp.ErrorMessage), "INCORRECTLY_PARTITIONED_TOPICS") || h.group("g") != nil || len(h.log.All()) != 0 {
		t.Fatalf("takeover with a mispartitioned changelog: code %d %s group %v", resp.ErrorCode, deref(resp.ErrorMessage), h.group("g") != nil)
	}
}
