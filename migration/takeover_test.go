package migration

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

type fakeGate struct {
	mu             sync.Mutex
	held, released int
}

func (g *fakeGate) Hold(_ string, drained func()) {
	g.mu.Lock()
	g.held++
	g.mu.Unlock()
	drained()
}

func (g *fakeGate) Release(string) {
	g.mu.Lock()
	g.released++
	g.mu.Unlock()
}

type fakeTakeoverUpstream struct {
	d                  *kmsg.DescribeGroupsResponseGroup
	fenceErr           error
	fenced             []kmsg.LeaveGroupRequestMember
	anchored, describe int
}

func (f *fakeTakeoverUpstream) DescribeGroup(_ string, done func(*kmsg.DescribeGroupsResponseGroup, error)) {
	f.describe++
	done(f.d, nil)
}

func (f *fakeTakeoverUpstream) FenceMembers(_ string, ms []kmsg.LeaveGroupRequestMember, done func(error)) {
	f.fenced = ms
	done(f.fenceErr)
}

func (f *fakeTakeoverUpstream) JoinAnchor(_ string, done func(error)) {
	f.anchored++
	done(nil)
}

func takeoverFixture(t *testing.T, fenceErr error, policy MigrationPolicy) (*Takeover, *fakeTakeoverUpstream, *fakeGate, *coordinator.Coordinator) {
	t.Helper()
	c := coordinatorOn(t, coordinator.NewManualClock(time.Unix(0, 0)))
	o := NewClassicObserver(c)
	o.ObserveGeneration("legacy", "a", 7)
	o.ObserveGeneration("legacy", "b", 7)
	up := &fakeTakeoverUpstream{fenceErr: fenceErr, d: &kmsg.DescribeGroupsResponseGroup{Group: "legacy", State: "Stable", ProtocolType: "consumer", Protocol: "stream",
		Members: []kmsg.DescribeGroupsResponseGroupMember{describedMember(t, "a", 0, 1, 2), describedMember(t, "b", 3, 4, 5)}}}
	gate := &fakeGate{}
	return &Takeover{Coordinator: c, Upstream: up, Gate: gate, Observer: o, Migration: MigrationConfig{Policy: policy}}, up, gate, c
}

func firstJoin() *kmsg.StreamsGroupHeartbeatRequest {
	first := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	first.Version, first.Group, first.MemberID, first.RebalanceTimeoutMillis, first.EndpointInformationEpoch = 1, "legacy", "s1", 60000, -1
	p := "ps"
	first.ProcessID = &p
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	sub.SubtopologyID, sub.SourceTopics = "0", []string{"foo"}
	topo.Subtopologies = append(topo.Subtopologies, sub)
	first.Topology = &topo
	first.ActiveTasks, first.StandbyTasks, first.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	first.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
	return first
}

// coordinatorOn is a coordinator on clock that knows topic foo (6
// partitions), closed when the test ends.
func coordinatorOn(t *testing.T, clock coordinator.Clock) *coordinator.Coordinator {
	t.Helper()
	md := coordinator.NewStaticMetadata()
	md.SetTopic("foo", 6)
	c, err := coordinator.New(coordinator.Options{Config: streams.DefaultConfig(), Clock: clock, Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// takeOver takes the classic group st over in c, firstJoin's streams
// member the first to join, and returns that member's answer.
func takeOver(c *coordinator.Coordinator, st streams.ClassicGroupState) *kmsg.StreamsGroupHeartbeatResponse {
	done := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
	c.TakeOverClassicGroup(st, firstJoin(), streams.ClientInfo{ClientID: "s1"}, func(r coordinator.HeartbeatResult) { done <- r.Response })
	return <-done
}

// classicCommit is c's verdict on an offset commit of classic member id of
// group legacy at generation 7.
func classicCommit(c *coordinator.Coordinator, id string) error {
	res := make(chan streams.OffsetCommitResult, 1)
	c.ValidateClassicOffsetCommit(streams.OffsetCommitRequest{GroupID: "legacy", MemberID: id, MemberEpoch: 7}, func(r streams.OffsetCommitResult) { res <- r })
	return (<-res).Err
}

func runTakeover(tk *Takeover) *kmsg.StreamsGroupHeartbeatResponse {
	done := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
	tk.Run(firstJoin(), streams.ClientInfo{ClientID: "s1"}, func(r coordinator.HeartbeatResult) { done <- r.Response })
	return <-done
}

func TestTakeoverRun(t *testing.T) {
	tk, up, gate, c := takeoverFixture(t, nil, MigrationBidirectional)
	var taken []streams.ClassicGroupState
	tk.TakenOver = func(st streams.ClassicGroupState) { taken = append(taken, st) }
	r := runTakeover(tk)
	if r.ErrorCode != 0 || len(up.fenced) != 2 || up.anchored != 1 || gate.held != 1 || gate.released != 1 || !c.Owns("legacy") {
		t.Fatalf("takeover: code %d fenced %d anchored %d gate %d/%d", r.ErrorCode, len(up.fenced), up.anchored, gate.held, gate.released)
	}
	if len(taken) != 1 || len(taken[0].Members) != 2 || taken[0].Members[0].LastHeartbeat.IsZero() {
		t.Fatalf("TakenOver told %+v, want the two members with their last heartbeats", taken)
	}
}

// The fence fails upstream: the streams group is undone, the gate released,
// the streams member told to retry; the classic group stays as it was.
func TestTakeoverUndoneOnUpstreamFailure(t *testing.T) {
	tk, up, gate, c := takeoverFixture(t, errors.New("broker down"), MigrationBidirectional)
	tk.TakenOver = func(streams.ClassicGroupState) { t.Error("a failed takeover reported as taken over") }
	r := runTakeover(tk)
	if r.ErrorCode != kerr.CoordinatorLoadInProgress.Code || up.anchored != 0 || gate.released != 1 || c.Owns("legacy") {
		t.Fatalf("failed takeover: code %d anchored %d released %d owned %v", r.ErrorCode, up.anchored, gate.released, c.Owns("legacy"))
	}
}

func TestTakeoverPolicy(t *testing.T) {
	for _, p := range []MigrationPolicy{MigrationDisabled, MigrationDowngrade} {
		tk, up, gate, c := takeoverFixture(t, nil, p)
		r := runTakeover(tk)
		if r.ErrorCode != kerr.GroupIDNotFound.Code || len(up.fenced) != 0 || gate.released != 1 || c.Owns("legacy") {
			t.Fatalf("%v: code %d", p, r.ErrorCode)
		}
	}
	// A classic rebalance upstream: retry later.
	tk, up, _, _ := takeoverFixture(t, nil, MigrationUpgrade)
	up.d.State = "CompletingRebalance"
	if r := runTakeover(tk); r.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("rebalancing upstream: %d", r.ErrorCode)
	}
}

// heldGate is a Holder whose drain ends when the test says so, as when a
// forwarded request is still in flight.
type heldGate struct {
	mu       sync.Mutex
	drained  func()
	released int
}

func (g *heldGate) Hold(_ string, drained func()) {
	g.mu.Lock()
	g.drained = drained
	g.mu.Unlock()
}

func (g *heldGate) Release(string) {
	g.mu.Lock()
	g.released++
	g.mu.Unlock()
}

// drainingTakeover runs a takeover on a gate whose drain ends when the test
// says so; the streams member's answer arrives on answered.
func drainingTakeover(tk *Takeover) (*heldGate, chan *kmsg.StreamsGroupHeartbeatResponse) {
	gate := &heldGate{}
	tk.Gate = gate
	answered := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
	tk.Run(firstJoin(), streams.ClientInfo{}, func(r coordinator.HeartbeatResult) { answered <- r.Response })
	return gate, answered
}

// TestTakeoverGivesUpWhenAMemberRejoinsWhileDraining: a classic member's
// JoinGroup held while the takeover drains means the group is rebalancing
// upstream, and the forwarded requests the drain waits for wait for it: the
// takeover gives up at once (the group's requests released, the streams
// member told to retry) instead of holding the group, commits included, for
// the whole drain timeout. A drain that ends afterwards does nothing.
func TestTakeoverGivesUpWhenAMemberRejoinsWhileDraining(t *testing.T) {
	tk, up, _, _ := takeoverFixture(t, nil, MigrationBidirectional)
	gate, answered := drainingTakeover(tk)
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.MemberID = "legacy", "a"
	tk.Observer.ObserveHeld("legacy", join)
	select {
	case r := <-answered:
		if r.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
			t.Fatalf("streams member answered %d, want COORDINATOR_LOAD_IN_PROGRESS", r.ErrorCode)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the takeover kept draining after a member rejoined")
	}
	gate.mu.Lock()
	released, drained := gate.released, gate.drained
	gate.mu.Unlock()
	if released != 1 {
		t.Fatalf("gate released %d times, want 1", released)
	}
	drained() // the forwarded request answers late
	if up.describe != 0 || up.anchored != 0 {
		t.Fatalf("the abandoned takeover went on: %d describes, %d anchor joins", up.describe, up.anchored)
	}
	select {
	case r := <-answered:
		t.Fatalf("answered twice: %+v", r)
	default:
	}
}

// TestTakeoverIgnoresHeldCommits: commits and heartbeats held while the
// takeover drains are no rejoin; the takeover completes once drained.
func TestTakeoverIgnoresHeldCommits(t *testing.T) {
	tk, _, _, _ := takeoverFixture(t, nil, MigrationBidirectional)
	gate, answered := drainingTakeover(tk)
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.MemberID = "legacy", "a"
	tk.Observer.ObserveHeld("legacy", commit)
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID = "legacy", "b"
	tk.Observer.ObserveHeld("legacy", hb)
	gate.mu.Lock()
	drained := gate.drained
	gate.mu.Unlock()
	drained()
	select {
	case r := <-answered:
		if r.ErrorCode != 0 {
			t.Fatalf("takeover answered %d (%s), want success", r.ErrorCode, deref(r.ErrorMessage))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
}
