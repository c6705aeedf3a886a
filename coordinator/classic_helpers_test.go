package coordinator

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// world runs classic and streams clients against one group of a harness and
// models what each client really holds: a classic client owns what its last
// SyncGroup gave it minus what it revoked; a streams client owns the last
// active task list it got. After every step it checks that no task is active
// on two clients and that no classic client got a fencing error it did not
// provoke.
type world struct {
	t       *testing.T
	h       *harness
	group   string
	classic map[string]*classicClient
	streams map[string]*streamsClient
}

type classicClient struct {
	w          *world
	id         string
	instance   string
	process    classicstreams.ProcessID
	endpoint   string
	version    int32 // SubscriptionInfo version used
	latest     int32
	generation int32
	owned      []classicstreams.TopicPartition
	active     []classicstreams.TaskID
	standby    []classicstreams.TaskID
	shutdown   bool
	lastInfo   *classicstreams.AssignmentInfo
	// gone: the client stopped talking (crash); it owns nothing for the
	// invariant once the group fenced it.
	gone bool
	// joined: the group gave the client its member id.
	joined bool
	// syncDue: joined, SyncGroup not sent yet.
	syncDue bool
	// conn is the client's coordinator connection, closed when the client
	// stops (replace_test.go); nil: unknown.
	conn chan struct{}
	// held: the JoinGroup the coordinator holds (Err errJoinHeld), then
	// its answer until answer takes it; nil when no join was held.
	held *streams.ClassicJoinResult
}

type streamsClient struct {
	id      string
	process string
	epoch   int32
	owned   streams.TaskSets
	// revoking: active tasks a response took away; the client still runs
	// them until it has revoked them, which it has by its next heartbeat.
	revoking streams.Tasks
	// conn is the connection it joined on (nil: unknown); its
	// heartbeats come on it too.
	conn chan struct{}
}

func newWorld(t *testing.T, h *harness, group string) *world {
	return &world{t: t, h: h, group: group, classic: map[string]*classicClient{}, streams: map[string]*streamsClient{}}
}

// check asserts the invariant: every active task is held by one client.
func (w *world) check() {
	w.t.Helper()
	holder := map[streams.TaskID]string{}
	add := func(who string, t streams.TaskID) {
		if other, dup := holder[t]; dup {
			w.t.Fatalf("task %s_%d active on %s and %s at once", t.Subtopology, t.Partition, other, who)
		}
		holder[t] = who
	}
	for id, c := range w.classic {
		if c.gone && w.h.group(w.group).Members[id] == nil {
			continue
		}
		for _, t := range c.active {
			add(id, streams.TaskID{Subtopology: strconv.Itoa(int(t.Subtopology)), Partition: t.Partition})
		}
	}
	for id, s := range w.streams {
		streams.ForEachTask(streams.TasksUnion(s.owned.Active, s.revoking), func(t streams.TaskID) { add(id, t) })
	}
}

// streamsJoin joins a streams-protocol member with the "foo" topology.
func (w *world) streamsJoin(id, process string, topo *kmsg.StreamsGroupHeartbeatRequestTopology) *streamsClient {
	s := &streamsClient{id: id, process: process}
	w.streams[id] = s
	r := w.h.ok(joinReq(w.group, id, process, topo))
	s.apply(r)
	w.check()
	return s
}

func (s *streamsClient) apply(r *kmsg.StreamsGroupHeartbeatResponse) {
	s.epoch = r.MemberEpoch
	if got, ok := assigned(r); ok {
		s.revoking = streams.TasksMinus(s.owned.Active, got.Active)
		s.owned = got
	}
}

// streamsHeartbeat sends the member's owned tasks and applies the answer.
func (w *world) streamsHeartbeat(id string) *kmsg.StreamsGroupHeartbeatResponse {
	w.t.Helper()
	s := w.streams[id]
	s.revoking = nil // revoked before this heartbeat is sent
	w.check()
	owned := s.owned
	r := w.h.okOn(hbReq(w.group, id, s.epoch, &owned), s.conn)
	s.apply(r)
	w.check()
	return r
}

// settleStreams heartbeats a streams member until its epoch is stable.
func (w *world) settleStreams(id string) {
	w.t.Helper()
	for range 4 {
		w.streamsHeartbeat(id)
	}
}

func (w *world) newClassic(id, process string) *classicClient {
	var p classicstreams.ProcessID
	copy(p[:], fmt.Sprintf("%-16s", process))
	c := &classicClient{w: w, id: id, process: p, version: 11, latest: 11, generation: -1}
	w.classic[id] = c
	return c
}

func (c *classicClient) subscription() (*classicstreams.ConsumerSubscription, *classicstreams.SubscriptionInfo) {
	info := &classicstreams.SubscriptionInfo{
		Version:                c.version,
		LatestSupportedVersion: c.latest,
		ProcessID:              c.process,
		UserEndPoint:           c.endpoint,
		Future:                 c.version > classicstreams.LatestSupportedVersion,
	}
	if c.shutdown {
		info.ErrorCode = classicstreams.AssignorErrorShutdownRequested
	}
	for _, t := range c.active {
		info.TaskOffsetSums = append(info.TaskOffsetSums, classicstreams.TaskOffsetSum{Task: t, OffsetSum: classicstreams.OffsetSumRunningActive})
	}
	for _, t := range c.standby {
		info.TaskOffsetSums = append(info.TaskOffsetSums, classicstreams.TaskOffsetSum{Task: t, OffsetSum: 10})
	}
	sub := &classicstreams.ConsumerSubscription{Version: 3, Topics: []string{"foo"}, OwnedPartitions: slices.Clone(c.owned), GenerationID: c.generation}
	return sub, info
}

// errJoinHeld is join's result while the coordinator holds the JoinGroup
// (classic.go, holdClassicJoin): the client waits for its answer, which arrives
// (held) once a later step of the world releases it.
var errJoinHeld = errors.New("the JoinGroup is held")

// join sends a JoinGroup; an error is returned, not applied. A held join
// returns errJoinHeld; its answer is applied when it comes (answer).
func (c *classicClient) join() streams.ClassicJoinResult {
	c.w.t.Helper()
	sub, info := c.subscription()
	var res *streams.ClassicJoinResult
	c.held = nil
	c.w.h.c.ClassicJoinGroup(streams.ClassicJoinRequest{
		GroupID: c.w.group, MemberID: c.id, InstanceID: c.instance,
		Client:           streams.ClientInfo{ClientID: c.id, ClientHost: "/127.0.0.1", Closed: c.closed()},
		SessionTimeoutMs: 10000, RebalanceTimeoutMs: 60000,
		Subscription: sub, Info: info, NewMember: !c.joined,
	}, func(r streams.ClassicJoinResult) {
		res = &r
		c.w.h.create(c.w.group, r.CreatableTopics)
		if r.Err == nil {
			c.generation = r.Generation
			c.joined = true
		}
		if c.held != nil {
			c.held = res
		}
	})
	c.w.h.checkReplay()
	if res == nil {
		c.held = &streams.ClassicJoinResult{Err: errJoinHeld}
		return *c.held
	}
	return *res
}

// answer is the answer of the client's held JoinGroup, once it came
// (false while it is still held, or when none was held).
func (c *classicClient) answer() (streams.ClassicJoinResult, bool) {
	if c.held == nil || errors.Is(c.held.Err, errJoinHeld) {
		return streams.ClassicJoinResult{}, false
	}
	r := *c.held
	c.held = nil
	return r, true
}

// waiting: the client's JoinGroup is held, unanswered.
func (c *classicClient) waiting() bool {
	return c.held != nil && errors.Is(c.held.Err, errJoinHeld)
}

// sync sends a SyncGroup and applies the assignment as a cooperative Kafka
// Streams client does; it reports whether the client revoked something (and
// so rejoins at once).
func (c *classicClient) sync() (streams.ClassicSyncResult, bool) {
	c.w.t.Helper()
	var res streams.ClassicSyncResult
	pt, pn := streams.ClassicProtocolType, streams.ClassicProtocolName
	c.w.h.c.ClassicSyncGroup(streams.ClassicSyncRequest{GroupID: c.w.group, MemberID: c.id, InstanceID: c.instance, Generation: c.generation, ProtocolType: &pt, ProtocolName: &pn, Client: streams.ClientInfo{Closed: c.closed()}},
		func(r streams.ClassicSyncResult) {
			res = r
			c.w.h.create(c.w.group, r.CreatableTopics)
		})
	c.w.h.checkReplay()
	if res.Err != nil {
		return res, false
	}
	ca, err := classicstreams.DecodeConsumerAssignment(res.Assignment)
	if err != nil {
		c.w.t.Fatalf("%s: assignment bytes: %v", c.id, err)
	}
	info, err := classicstreams.DecodeAssignmentInfo(ca.UserData)
	if err != nil {
		c.w.t.Fatalf("%s: AssignmentInfo: %v", c.id, err)
	}
	if info.Version > c.version && c.version <= classicstreams.LatestSupportedVersion || info.CommonlySupportedVersion > c.latest {
		c.w.t.Fatalf("%s: AssignmentInfo v%d commonly %d sent to a member at v%d latest %d: the client thread dies", c.id, info.Version, info.CommonlySupportedVersion, c.version, c.latest)
	}
	if len(info.ActiveTasks) != len(ca.AssignedPartitions) {
		c.w.t.Fatalf("%s: %d active tasks for %d partitions", c.id, len(info.ActiveTasks), len(ca.AssignedPartitions))
	}
	c.lastInfo = info
	revoked := false
	for _, tp := range c.owned {
		if !slices.Contains(ca.AssignedPartitions, tp) {
			revoked = true
		}
	}
	c.owned = slices.Clone(ca.AssignedPartitions)
	c.active = slices.Compact(slices.Clone(info.ActiveTasks))
	c.standby = nil
	for _, s := range info.StandbyTasks {
		c.standby = append(c.standby, s.Task)
	}
	// Version probing as the client does it (maybeUpdateSubscriptionVersion).
	if info.Version >= 3 && info.CommonlySupportedVersion > c.version {
		c.version = info.CommonlySupportedVersion
	}
	if c.version > classicstreams.LatestSupportedVersion && info.Version == classicstreams.LatestSupportedVersion {
		c.version = info.Version
	}
	c.w.check()
	return res, revoked
}

func (c *classicClient) heartbeat() error {
	var err error
	c.w.h.c.ClassicHeartbeat(streams.ClassicHeartbeatRequest{GroupID: c.w.group, MemberID: c.id, InstanceID: c.instance, Generation: c.generation, Client: streams.ClientInfo{Closed: c.closed()}}, func(e error) { err = e })
	c.w.h.checkReplay()
	return err
}

// rebalance runs the classic cycle until the client is stable: JoinGroup,
// SyncGroup, and again while it revoked something. It fails the test on a
// fencing error.
func (c *classicClient) rebalance() {
	c.w.t.Helper()
	for range 3 {
		var j streams.ClassicJoinResult
		if a, ok := c.answer(); ok {
			j = a
		} else if !c.waiting() {
			j = c.join()
		}
		if c.waiting() {
			// The others run while the client waits.
			if j = c.settleHeld(); errors.Is(j.Err, errJoinHeld) {
				return
			}
		}
		if j.Err != nil {
			c.w.t.Fatalf("%s: JoinGroup: %v", c.id, j.Err)
		}
		s, revoked := c.sync()
		if errors.Is(s.Err, kerr.RebalanceInProgress) {
			continue
		}
		if s.Err != nil {
			c.w.t.Fatalf("%s: SyncGroup: %v", c.id, s.Err)
		}
		if !revoked {
			return
		}
	}
}

// settleHeld heartbeats the world's streams members while the client's
// JoinGroup is held, a few rounds, and returns its answer (errJoinHeld if
// none came).
func (c *classicClient) settleHeld() streams.ClassicJoinResult {
	c.w.t.Helper()
	for range 4 {
		for id := range c.w.streams {
			c.w.streamsHeartbeat(id)
		}
		if j, ok := c.answer(); ok {
			return j
		}
	}
	return streams.ClassicJoinResult{Err: errJoinHeld}
}

// step is one turn of a classic client in a loop of the world: nothing while
// its JoinGroup is held, else a rebalance when it has not joined, was
// answered, or its heartbeat tells it to rejoin.
func (c *classicClient) step() {
	c.w.t.Helper()
	if c.waiting() {
		return
	}
	if c.held != nil || !c.joined || c.mustRejoin() {
		c.rebalance()
	}
}

// joinNow sends a JoinGroup that must succeed; it returns true when a
// SyncGroup is due, false while the join is held (waitAnswer).
func (c *classicClient) joinNow() bool {
	c.w.t.Helper()
	j := c.join()
	if errors.Is(j.Err, errJoinHeld) {
		return false
	}
	if j.Err != nil {
		c.w.t.Fatalf("%s: JoinGroup: %v", c.id, j.Err)
	}
	return true
}

// waitAnswer: the client's JoinGroup is held, so it does nothing this step
// (true); or the answer came, which must be a success, and its SyncGroup is
// due next.
func (c *classicClient) waitAnswer() bool {
	c.w.t.Helper()
	if c.waiting() {
		return true
	}
	if j, ok := c.answer(); ok {
		if j.Err != nil {
			c.w.t.Fatalf("%s: held JoinGroup: %v", c.id, j.Err)
		}
		c.syncDue = true
	}
	return false
}

// expectOK fails on any heartbeat error other than REBALANCE_IN_PROGRESS,
// and reports whether the client must rejoin.
func (c *classicClient) mustRejoin() bool {
	c.w.t.Helper()
	// Between rebalances a Streams thread commits at its generation; the
	// migration must never make that fail.
	if r := streams.ValidateClassicOffsetCommit(c.w.h.group(c.w.group), streams.OffsetCommitRequest{GroupID: c.w.group, MemberID: c.id, InstanceID: c.instance, MemberEpoch: c.generation}); r.Err != nil {
		c.w.t.Fatalf("%s: OffsetCommit at generation %d: %v", c.id, c.generation, r.Err)
	}
	err := c.heartbeat()
	if err != nil && !errors.Is(err, kerr.RebalanceInProgress) {
		c.w.t.Fatalf("%s: Heartbeat: %v", c.id, err)
	}
	return err != nil
}

// closed is the client's connection as ClientInfo.Closed (nil: unknown).
func (c *classicClient) closed() <-chan struct{} {
	if c.conn == nil {
		return nil
	}
	return c.conn
}

func cTasks(ps ...int32) []classicstreams.TaskID {
	out := make([]classicstreams.TaskID, len(ps))
	for i, p := range ps {
		out[i] = classicstreams.TaskID{Subtopology: 0, Partition: p}
	}
	return out
}

func fooPartitions(ps ...int32) []classicstreams.TopicPartition {
	out := make([]classicstreams.TopicPartition, len(ps))
	for i, p := range ps {
		out[i] = classicstreams.TopicPartition{Topic: "foo", Partition: p}
	}
	return out
}

func codeOf(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	if err == nil {
		return 0
	}
	return -1
}
