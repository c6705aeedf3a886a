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

// stallingUpstream answers DescribeGroup at once unless stallDescribe, and
// keeps the anchor join's callback for the test (a broker answering the
// anchor's JoinGroup COORDINATOR_NOT_AVAILABLE for a while).
type stallingUpstream struct {
	fakeTakeoverUpstream
	stallDescribe bool
	mu            sync.Mutex
	described     chan func(*kmsg.DescribeGroupsResponseGroup, error)
	anchor        chan func(error)
}

func (s *stallingUpstream) DescribeGroup(g string, done func(*kmsg.DescribeGroupsResponseGroup, error)) {
	if s.stallDescribe {
		s.described <- done
		return
	}
	s.fakeTakeoverUpstream.DescribeGroup(g, done)
}

func (s *stallingUpstream) JoinAnchor(_ string, done func(error)) { s.anchor <- done }

// holdFixture is takeoverFixture on a clock the test moves, with the
// takeover's hold limit on it and a stalling upstream.
func holdFixture(t *testing.T) (*Takeover, *stallingUpstream, *fakeGate, *coordinator.Coordinator, *coordinator.ManualClock) {
	t.Helper()
	tk, up, gate, _ := takeoverFixture(t, nil, MigrationBidirectional)
	clock := coordinator.NewManualClock(time.Unix(0, 0))
	c := coordinatorOn(t, clock)
	su := &stallingUpstream{fakeTakeoverUpstream: *up, described: make(chan func(*kmsg.DescribeGroupsResponseGroup, error), 1), anchor: make(chan func(error), 1)}
	tk.Coordinator, tk.Upstream, tk.Clock = c, su, clock
	return tk, su, gate, c, clock
}

// startTakeover runs tk; the member's answers arrive on the channel.
func startTakeover(tk *Takeover) chan *kmsg.StreamsGroupHeartbeatResponse {
	answered := make(chan *kmsg.StreamsGroupHeartbeatResponse, 2)
	tk.Run(firstJoin(), streams.ClientInfo{ClientID: "s1"}, func(r coordinator.HeartbeatResult) { answered <- r.Response })
	return answered
}

func await[T any](t *testing.T, ch chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s", what)
	}
	var zero T
	return zero
}

func noneYet[T any](t *testing.T, ch chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("unexpected %s: %+v", what, v)
	case <-time.After(50 * time.Millisecond):
	}
}

// hasMember reports whether the streams group here has the member.
func hasMember(t *testing.T, c *coordinator.Coordinator, id string) bool {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{"legacy"}
	got := make(chan *kmsg.StreamsGroupDescribeResponse, 1)
	c.StreamsGroupDescribe(req, func(r *kmsg.StreamsGroupDescribeResponse) { got <- r })
	for _, g := range (<-got).Groups {
		for _, m := range g.Members {
			if m.MemberID == id {
				return true
			}
		}
	}
	return false
}

// TestTakeoverHoldLimitAnswersOnceBuilt: the broker refuses the anchor's
// JoinGroup (its coordinator moving). Once the group is built here and its
// classic members fenced upstream, the takeover holds the group's requests
// (the member's heartbeat, the classic members' TxnOffsetCommits) no longer
// than takeoverHoldLimit: then the streams member is answered its join and
// the group's requests released, and the anchor's join finishes the
// takeover behind. The member's session runs from its answer, not from when
// streamshift began holding its heartbeat.
func TestTakeoverHoldLimitAnswersOnceBuilt(t *testing.T) {
	tk, up, gate, c, clock := holdFixture(t)
	var taken int
	tk.TakenOver = func(streams.ClassicGroupState) { taken++ }
	answered := startTakeover(tk)
	anchored := await(t, up.anchor, "anchor join")
	if len(up.fenced) != 2 {
		t.Fatalf("%d classic members fenced before the anchor's join, want 2", len(up.fenced))
	}
	clock.Advance(takeoverHoldLimit - time.Millisecond)
	noneYet(t, answered, "answer before the hold limit")
	clock.Advance(time.Millisecond)
	r := await(t, answered, "answer at the hold limit")
	if r.ErrorCode != 0 {
		t.Fatalf("streams member answered %v (%s), want its join", kerr.ErrorForCode(r.ErrorCode), deref(r.ErrorMessage))
	}
	gate.mu.Lock()
	released := gate.released
	gate.mu.Unlock()
	if released != 1 || !c.Owns("legacy") {
		t.Fatalf("at the hold limit: gate released %d times, owned here %v", released, c.Owns("legacy"))
	}

	// The session: 45 s (Kafka's default) from the answer at 5 s.
	session := streams.DefaultConfig().Defaults.SessionTimeout
	clock.Advance(session - takeoverHoldLimit + time.Millisecond)
	if !hasMember(t, c, "s1") {
		t.Fatalf("the streams member was fenced %v after its answer: its session ran while streamshift held its heartbeat", session-takeoverHoldLimit)
	}

	anchored(nil) // the coordinator settled: the anchor is in
	noneYet(t, answered, "second answer")
	if taken != 1 || !c.Owns("legacy") {
		t.Fatalf("after the anchor joined: taken over %d times, owned %v", taken, c.Owns("legacy"))
	}
}

// TestTakeoverHoldLimitAbandonsWhenTheAnchorFails: the anchor never joins
// within its own limit: the takeover answered at the hold limit is
// abandoned as before (the group left to the upstream classic
// coordinator), without a second answer.
func TestTakeoverHoldLimitAbandonsWhenTheAnchorFails(t *testing.T) {
	tk, up, _, c, clock := holdFixture(t)
	tk.TakenOver = func(streams.ClassicGroupState) { t.Error("an abandoned takeover reported as taken over") }
	answered := startTakeover(tk)
	anchored := await(t, up.anchor, "anchor join")
	clock.Advance(takeoverHoldLimit)
	if r := await(t, answered, "answer at the hold limit"); r.ErrorCode != 0 {
		t.Fatalf("answered %d, want the join", r.ErrorCode)
	}
	anchored(errors.New("anchor join: NOT_COORDINATOR for 20s"))
	deadline := time.Now().Add(10 * time.Second)
	for c.Owns("legacy") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if c.Owns("legacy") {
		t.Fatal("the takeover whose anchor failed was not abandoned")
	}
	noneYet(t, answered, "second answer")
}

// TestTakeoverHoldLimitGivesUpBeforeBuilt: the upstream does not describe
// the group within the hold limit: the takeover gives up there (the group's
// requests released, the streams member told COORDINATOR_LOAD_IN_PROGRESS,
// which it retries), and a describe that comes late builds nothing.
func TestTakeoverHoldLimitGivesUpBeforeBuilt(t *testing.T) {
	tk, up, gate, c, clock := holdFixture(t)
	up.stallDescribe = true
	answered := startTakeover(tk)
	described := await(t, up.described, "describe")
	clock.Advance(takeoverHoldLimit)
	r := await(t, answered, "answer at the hold limit")
	if r.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("answered %v, want COORDINATOR_LOAD_IN_PROGRESS", kerr.ErrorForCode(r.ErrorCode))
	}
	gate.mu.Lock()
	released := gate.released
	gate.mu.Unlock()
	if released != 1 {
		t.Fatalf("gate released %d times, want 1", released)
	}
	described(up.d, nil)
	noneYet(t, answered, "second answer")
	if c.Owns("legacy") || len(up.fenced) != 0 {
		t.Fatalf("a late describe went on: owned %v, fenced %d", c.Owns("legacy"), len(up.fenced))
	}
}
