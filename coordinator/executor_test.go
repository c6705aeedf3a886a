package coordinator

import (
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// gateLog holds every Append until release is closed, so that a group's
// executor stays busy and later work waits in its queue.
type gateLog struct {
	*MemoryLog
	entered chan struct{}
	release chan struct{}
}

func newGateLog() *gateLog {
	return &gateLog{MemoryLog: NewMemoryLog(), entered: make(chan struct{}, 64), release: make(chan struct{})}
}

func (l *gateLog) Append(group string, recs []streams.Record) error {
	select {
	case l.entered <- struct{}{}:
	default: // nobody waits for later appends
	}
	<-l.release
	return l.MemoryLog.Append(group, recs)
}

// answerWait bounds every wait for a callback: a lost callback fails the
// test instead of hanging it.
const answerWait = 10 * time.Second

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(answerWait):
		t.Fatalf("%s: no answer within %v", what, answerWait)
	}
}

// noCode is what answers without a Kafka error code report.
const noCode int16 = -100

// entryPoint calls one public entry point of the coordinator for a group;
// answer gets the Kafka error code of its answer (noCode when the answer
// carries none). Blocking entry points run on their own goroutine.
type entryPoint struct {
	name string
	call func(c *Coordinator, group string, answer func(int16))
}

func entryPoints() []entryPoint {
	client := streams.ClientInfo{ClientID: "c", ClientHost: "/127.0.0.1"}
	sub := &classicstreams.ConsumerSubscription{Version: 3, Topics: []string{"foo"}}
	info := &classicstreams.SubscriptionInfo{Version: 11, LatestSupportedVersion: 11}
	errCode := func(answer func(int16)) func(error) { return func(err error) { answer(codeOf(err)) } }
	return []entryPoint{
		{"StreamsGroupHeartbeat", func(c *Coordinator, g string, answer func(int16)) {
			c.StreamsGroupHeartbeat(hbReq(g, "m1", 2, nil), client, func(r *kmsg.StreamsGroupHeartbeatResponse) { answer(r.ErrorCode) })
		}},
		{"StreamsGroupDescribe", func(c *Coordinator, g string, answer func(int16)) {
			req := kmsg.NewPtrStreamsGroupDescribeRequest()
			req.Groups = []string{g}
			c.StreamsGroupDescribe(req, func(r *kmsg.StreamsGroupDescribeResponse) { answer(r.Groups[0].ErrorCode) })
		}},
		{"TakeOverClassicGroup", func(c *Coordinator, g string, answer func(int16)) {
			c.TakeOverClassicGroup(streams.ClassicGroupState{GroupID: g}, joinReq(g, "m9", "p9", sourceTopology("foo")), client,
				func(r HeartbeatResult) { answer(r.Response.ErrorCode) })
		}},
		{"DeleteGroup", func(c *Coordinator, g string, answer func(int16)) { c.DeleteGroup(g, errCode(answer)) }},
		{"BeginHandBack", func(c *Coordinator, g string, answer func(int16)) {
			c.BeginHandBack(g, func(streams.HandBackState) {}, errCode(answer))
		}},
		{"HandBack", func(c *Coordinator, g string, answer func(int16)) {
			c.HandBack(g, func(streams.HandBackState) { answer(noCode) })
		}},
		{"AbortHandBack", func(c *Coordinator, g string, answer func(int16)) { c.AbortHandBack(g, func() { answer(noCode) }) }},
		{"FinishHandBack", func(c *Coordinator, g string, answer func(int16)) { c.FinishHandBack(g, errCode(answer)) }},
		{"AbandonTakeOver", func(c *Coordinator, g string, answer func(int16)) { c.AbandonTakeOver(g, errCode(answer)) }},
		{"ClassicOnly", func(c *Coordinator, g string, answer func(int16)) { c.ClassicOnly(g, func(bool) { answer(noCode) }) }},
		{"ClassicJoinGroup", func(c *Coordinator, g string, answer func(int16)) {
			c.ClassicJoinGroup(streams.ClassicJoinRequest{GroupID: g, MemberID: "c1", Client: client, SessionTimeoutMs: 10000, RebalanceTimeoutMs: 60000, Subscription: sub, Info: info, NewMember: true},
				func(r streams.ClassicJoinResult) { answer(codeOf(r.Err)) })
		}},
		{"ClassicSyncGroup", func(c *Coordinator, g string, answer func(int16)) {
			c.ClassicSyncGroup(streams.ClassicSyncRequest{GroupID: g, MemberID: "c1", Generation: 1}, func(r streams.ClassicSyncResult) { answer(codeOf(r.Err)) })
		}},
		{"ClassicHeartbeat", func(c *Coordinator, g string, answer func(int16)) {
			c.ClassicHeartbeat(streams.ClassicHeartbeatRequest{GroupID: g, MemberID: "c1", Generation: 1}, errCode(answer))
		}},
		{"ClassicLeaveGroup", func(c *Coordinator, g string, answer func(int16)) {
			c.ClassicLeaveGroup(g, []streams.ClassicLeaveMember{{MemberID: "c1"}}, func(_ []error, err error) { answer(codeOf(err)) })
		}},
		{"ValidateClassicOffsetCommit", func(c *Coordinator, g string, answer func(int16)) {
			c.ValidateClassicOffsetCommit(streams.OffsetCommitRequest{GroupID: g, MemberID: "c1", MemberEpoch: 1}, func(r streams.OffsetCommitResult) { answer(codeOf(r.Err)) })
		}},
		{"ValidateOffsetCommit", func(c *Coordinator, g string, answer func(int16)) {
			c.ValidateOffsetCommit(streams.OffsetCommitRequest{GroupID: g, MemberID: "m1", MemberEpoch: 2, Version: 9}, func(r streams.OffsetCommitResult) { answer(codeOf(r.Err)) })
		}},
		{"ValidateOffsetFetch", func(c *Coordinator, g string, answer func(int16)) {
			c.ValidateOffsetFetch(g, "m1", 2, errCode(answer))
		}},
		{"ListGroups", func(c *Coordinator, g string, answer func(int16)) {
			c.ListGroups(nil, func([]ListedGroup) { answer(noCode) })
		}},
		{"Owns", func(c *Coordinator, g string, answer func(int16)) { go func() { c.Owns(g); answer(noCode) }() }},
		{"Summary", func(c *Coordinator, g string, answer func(int16)) { go func() { c.Summary(g); answer(noCode) }() }},
		{"SourceTopics", func(c *Coordinator, g string, answer func(int16)) { go func() { c.SourceTopics(g); answer(noCode) }() }},
	}
}

// answers counts the answers of each entry point and keeps their codes.
type answers struct {
	mu    sync.Mutex
	codes map[string][]int16
	all   chan struct{} // closed once every entry point answered once
	want  int
}

func callAll(c *Coordinator, group string) *answers {
	eps := entryPoints()
	a := &answers{codes: map[string][]int16{}, all: make(chan struct{}), want: len(eps)}
	for _, ep := range eps {
		ep.call(c, group, func(code int16) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.codes[ep.name] = append(a.codes[ep.name], code)
			if len(a.codes) == a.want && len(a.codes[ep.name]) == 1 {
				close(a.all)
			}
		})
	}
	return a
}

// check waits for every entry point's answer and fails unless each
// answered exactly once, with code where the answer carries one.
func (a *answers) check(t *testing.T, what string, code *kerr.Error) {
	t.Helper()
	select {
	case <-a.all:
	case <-time.After(answerWait):
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ep := range entryPoints() {
		got := a.codes[ep.name]
		switch {
		case len(got) != 1:
			t.Errorf("%s: %s answered %d times", what, ep.name, len(got))
		case got[0] != noCode && got[0] != code.Code:
			t.Errorf("%s: %s answered %v, want %s", what, ep.name, kerr.ErrorForCode(got[0]), code.Message)
		}
	}
}

// newGatedCoordinator runs group work on the executors' goroutines (not
// inline), on a virtual clock, over a log that holds appends.
func newGatedCoordinator(t *testing.T) (*Coordinator, *gateLog, *ManualClock) {
	t.Helper()
	md := NewStaticMetadata()
	md.SetTopic("foo", 4)
	clock := NewManualClock(testStart)
	log := newGateLog()
	cfg := streams.DefaultConfig()
	cfg.Defaults.InitialRebalanceDelay = 0
	c, err := New(Options{Config: cfg, Clock: clock, Log: log, Metadata: md, Assignor: testAssignor{}})
	if err != nil {
		t.Fatal(err)
	}
	return c, log, clock
}

// busyGroup starts a join of group g that holds g's executor in its append
// until log.release is closed; the join's answer arrives on the channel.
func busyGroup(t *testing.T, c *Coordinator, log *gateLog, g string) <-chan struct{} {
	t.Helper()
	joined := make(chan struct{})
	c.StreamsGroupHeartbeat(joinReq(g, "m1", "p1", sourceTopology("foo")), streams.ClientInfo{ClientID: "c"}, func(r *kmsg.StreamsGroupHeartbeatResponse) {
		if r.ErrorCode != 0 {
			t.Errorf("the running join answered %v", kerr.ErrorForCode(r.ErrorCode))
		}
		close(joined)
	})
	select {
	case <-log.entered:
	case <-time.After(answerWait):
		t.Fatal("the join never reached the log")
	}
	return joined
}

// stopBusyGroup queues a call of every entry point for group g behind a
// join that holds g's executor, runs stop meanwhile, and checks that each
// queued call is answered once with code before the join is let finish;
// it returns once the join answered and stop returned.
func stopBusyGroup(t *testing.T, stop func(*Coordinator), code *kerr.Error) (*Coordinator, *gateLog, *answers) {
	t.Helper()
	c, log, clock := newGatedCoordinator(t)
	joined := busyGroup(t, c, log, "g")
	queued := callAll(c, "g")
	stopped := make(chan struct{})
	go func() { stop(c); close(stopped) }()
	queued.check(t, "queued", code)
	close(log.release)
	waitClosed(t, joined, "the running join")
	waitClosed(t, stopped, "the stop")
	if n := clock.Pending(); n != 0 {
		t.Errorf("%d timers left", n)
	}
	return c, log, queued
}

// Close answers the requests queued on a group's executor with
// COORDINATOR_NOT_AVAILABLE instead of running them, lets the running one
// finish, and answers every request made after it at once: no callback is
// lost (the heartbeat, describe and DeleteGroup ones were) or called twice.
func TestCloseAnswersQueuedWork(t *testing.T) {
	c, _, queued := stopBusyGroup(t, (*Coordinator).Close, kerr.CoordinatorNotAvailable)
	callAll(c, "g").check(t, "after Close", kerr.CoordinatorNotAvailable)
	queued.check(t, "queued at Close, once the executor is idle", kerr.CoordinatorNotAvailable)
}

// Unload answers the requests queued for the group with NOT_COORDINATOR,
// lets the running one finish, then drops the group's state and timers.
func TestUnloadAnswersQueuedWork(t *testing.T) {
	c, log, queued := stopBusyGroup(t, func(c *Coordinator) { c.Unload("g") }, kerr.NotCoordinator)
	defer c.Close()
	if c.Owns("g") || mayServeClassic(c, "g") {
		t.Error("the unloaded group is still held")
	}
	// The group's records stay in the log for the next owner.
	if recs, _ := log.Load("g"); len(recs) == 0 {
		t.Error("Unload touched the log")
	}
	queued.check(t, "queued at Unload, once the executor is idle", kerr.NotCoordinator)
	// other groups are served as before.
	other := make(chan int16, 1)
	c.StreamsGroupHeartbeat(joinReq("h", "m1", "p1", sourceTopology("foo")), streams.ClientInfo{ClientID: "c"}, func(r *kmsg.StreamsGroupHeartbeatResponse) { other <- r.ErrorCode })
	select {
	case code := <-other:
		if code != 0 {
			t.Errorf("another group's join answered %v", kerr.ErrorForCode(code))
		}
	case <-time.After(answerWait):
		t.Fatal("another group's join got no answer")
	}
}

// mayServeClassic: would EnterClassic let a classic request of the group
// ask the coordinator (its verdict without entering the gate)?
func mayServeClassic(c *Coordinator, group string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mayServeLocked(c.queues[group]) == ClassicServe
}
