package coordinator

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

// testAssignor is a small deterministic sticky assignor for the coordinator's
// tests (the real one is tested in package assignor): an active task stays
// with its previous owner while that owner is under quota, the rest go to the
// least-loaded member (ties by member id); standbys go to the least-loaded
// members of other processes.
type testAssignor struct{}

func (testAssignor) Name() string { return "test" }

func (testAssignor) Assign(spec assignor.GroupSpec, topo assignor.TopologyDescriber) (assignor.GroupAssignment, error) {
	ids := make([]string, 0, len(spec.Members))
	for id := range spec.Members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := assignor.GroupAssignment{Members: map[string]assignor.MemberAssignment{}}
	if len(ids) == 0 {
		return out, nil
	}
	active := map[string]streams.TasksBuilder{}
	standby := map[string]streams.TasksBuilder{}
	load := map[string]int{}
	for _, id := range ids {
		active[id], standby[id] = streams.TasksBuilder{}, streams.TasksBuilder{}
	}
	subs := topo.Subtopologies()
	total := 0
	for _, s := range subs {
		total += int(s.NumTasks)
	}
	quota := (total + len(ids) - 1) / len(ids)
	var rest []streams.TaskID
	for _, s := range subs {
		for p := int32(0); p < s.NumTasks; p++ {
			owner := ""
			for _, id := range ids {
				if streams.TasksContains(spec.Members[id].ActiveTasks, s.ID, p) {
					owner = id
					break
				}
			}
			if owner != "" && load[owner] < quota {
				active[owner].Add(s.ID, p)
				load[owner]++
			} else {
				rest = append(rest, streams.TaskID{Subtopology: s.ID, Partition: p})
			}
		}
	}
	leastLoaded := func(ok func(id string) bool) string {
		best := ""
		for _, id := range ids {
			if ok(id) && (best == "" || load[id] < load[best]) {
				best = id
			}
		}
		return best
	}
	for _, t := range rest {
		id := leastLoaded(func(string) bool { return true })
		active[id].Add(t.Subtopology, t.Partition)
		load[id]++
	}
	replicas, _ := strconv.Atoi(spec.Configs["num.standby.replicas"])
	for _, s := range subs {
		if !s.Stateful {
			continue
		}
		for p := int32(0); p < s.NumTasks; p++ {
			used := map[string]bool{}
			for _, id := range ids {
				if _, ok := active[id][s.ID]; ok && contains(active[id][s.ID], p) {
					used[spec.Members[id].ProcessID] = true
				}
			}
			for r := 0; r < replicas; r++ {
				id := leastLoaded(func(id string) bool { return !used[spec.Members[id].ProcessID] })
				if id == "" {
					break
				}
				standby[id].Add(s.ID, p)
				load[id]++
				used[spec.Members[id].ProcessID] = true
			}
		}
	}
	for _, id := range ids {
		out.Members[id] = assignor.MemberAssignment{ActiveTasks: active[id].Build(), StandbyTasks: standby[id].Build()}
	}
	return out, nil
}

func contains(ps []int32, p int32) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

// recordingLog keeps every appended batch.
type recordingLog struct {
	*MemoryLog
	mu      sync.Mutex
	batches [][]streams.Record
	fail    error
}

func (l *recordingLog) Append(group string, recs []streams.Record) error {
	l.mu.Lock()
	fail := l.fail
	l.mu.Unlock()
	if fail != nil {
		return fail
	}
	l.mu.Lock()
	l.batches = append(l.batches, append([]streams.Record(nil), recs...))
	l.mu.Unlock()
	return l.MemoryLog.Append(group, recs)
}

func (l *recordingLog) last() []streams.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.batches) == 0 {
		return nil
	}
	return l.batches[len(l.batches)-1]
}

// fakeCreator records CreateTopics calls; the test completes them.
type fakeCreator struct {
	mu    sync.Mutex
	calls [][]streams.CreatableTopic
	dones []func(map[string]error)
}

func (f *fakeCreator) CreateTopics(topics []streams.CreatableTopic, done func(map[string]error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, topics)
	f.dones = append(f.dones, done)
}

// create does what the route does with the internal topics an operation
// returned, without the authorization: the fake creator gets them, and its
// done reports to the coordinator.
func (h *harness) create(group string, topics []streams.CreatableTopic) {
	if len(topics) == 0 {
		return
	}
	names := TopicNames(topics)
	h.creator.CreateTopics(topics, func(failed map[string]error) { h.c.TopicsCreated(group, names, failed) })
}

type harness struct {
	t       *testing.T
	c       *Coordinator
	clock   *ManualClock
	log     *recordingLog
	md      *StaticMetadata
	creator *fakeCreator
}

var testStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newHarness builds an inline coordinator in virtual time. Unless mut
// changes them, the initial delay and the assignment interval are 0.
func newHarness(t *testing.T, mut func(*streams.Config)) *harness {
	t.Helper()
	cfg := streams.DefaultConfig()
	cfg.Defaults.InitialRebalanceDelay = 0
	cfg.Defaults.AssignmentInterval = 0
	if mut != nil {
		mut(&cfg)
	}
	h := &harness{t: t, clock: NewManualClock(testStart), log: &recordingLog{MemoryLog: NewMemoryLog()}, md: NewStaticMetadata(), creator: &fakeCreator{}}
	c, err := New(Options{Config: cfg, Clock: h.clock, Log: h.log, Metadata: h.md, CreateTopics: true, Assignor: testAssignor{}})
	if err != nil {
		t.Fatal(err)
	}
	c.inline = true
	h.c = c
	return h
}

func (h *harness) hb(req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	h.t.Helper()
	return h.hbOn(req, nil)
}

// hbOn heartbeats on connection conn (nil: unknown).
func (h *harness) hbOn(req *kmsg.StreamsGroupHeartbeatRequest, conn chan struct{}) *kmsg.StreamsGroupHeartbeatResponse {
	h.t.Helper()
	var resp *kmsg.StreamsGroupHeartbeatResponse
	client := streams.ClientInfo{ClientID: "client-" + req.MemberID, ClientHost: "/127.0.0.1"}
	if conn != nil {
		client.Closed = conn
	}
	h.c.Heartbeat(req, client, HeartbeatOptions{}, func(r HeartbeatResult) {
		resp = r.Response
		h.create(req.Group, r.CreatableTopics)
	})
	if resp == nil {
		h.t.Fatal("no response")
	}
	h.checkReplay()
	return resp
}

// ok heartbeats and fails the test on an error code.
func (h *harness) ok(req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	h.t.Helper()
	return h.okOn(req, nil)
}

// okOn is ok on connection conn (nil: unknown).
func (h *harness) okOn(req *kmsg.StreamsGroupHeartbeatRequest, conn chan struct{}) *kmsg.StreamsGroupHeartbeatResponse {
	h.t.Helper()
	resp := h.hbOn(req, conn)
	if resp.ErrorCode != 0 {
		h.t.Fatalf("heartbeat %s epoch %d: error %d %v", req.MemberID, req.MemberEpoch, resp.ErrorCode, deref(resp.ErrorMessage))
	}
	return resp
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func (h *harness) advance(d time.Duration) {
	h.clock.Advance(d)
	h.checkReplay()
}

func (h *harness) group(id string) *streams.Group {
	s := h.queue(id)
	if s == nil {
		return nil
	}
	return s.group
}

func (h *harness) queue(id string) *groupQueue {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	return h.c.queues[id]
}

// checkReplay asserts that replaying the log gives the live state.
func (h *harness) checkReplay() {
	h.t.Helper()
	gs, err := streams.Replay(nil, h.log.All())
	if err != nil {
		h.t.Fatalf("replay: %v", err)
	}
	h.c.mu.Lock()
	var ids []string
	for id := range h.c.queues {
		ids = append(ids, id)
	}
	h.c.mu.Unlock()
	for _, id := range ids {
		live := h.group(id)
		if d := diffGroups(live, gs[id]); d != "" {
			h.t.Fatalf("group %s: replay(log) differs from state: %s", id, d)
		}
	}
}

type groupSnapshot struct {
	GroupEpoch, AssignmentEpoch, ValidatedTopologyEpoch int32
	MetadataHash                                        uint64
	AssignmentTimestamp                                 int64
	LastAssignmentConfigs                               []streams.KeyValue
	Topology                                            any
	Members                                             map[string][2]any
	Target                                              map[string]streams.TaskSets
	Static                                              map[string]string
	Active                                              map[streams.TaskID]string
	Standby, Warmup                                     map[streams.TaskID]map[string]int
}

func snapshot(g *streams.Group) *groupSnapshot {
	if g == nil {
		return nil
	}
	s := &groupSnapshot{
		GroupEpoch: g.GroupEpoch, AssignmentEpoch: g.AssignmentEpoch, ValidatedTopologyEpoch: g.ValidatedTopologyEpoch,
		MetadataHash: g.MetadataHash, AssignmentTimestamp: g.AssignmentTimestamp, LastAssignmentConfigs: g.LastAssignmentConfigs,
		Members: map[string][2]any{}, Target: g.Target, Static: g.StaticMembers,
		Active: g.ActiveOwners, Standby: g.StandbyOwners, Warmup: g.WarmupOwners,
	}
	if g.Topology != nil {
		s.Topology = *g.Topology
	}
	for id, m := range g.Members {
		s.Members[id] = [2]any{m.Meta, m.CurrentAssignment()}
	}
	return s
}

func diffGroups(a, b *streams.Group) string {
	sa, sb := snapshot(a), snapshot(b)
	if reflect.DeepEqual(sa, sb) {
		return ""
	}
	return fmt.Sprintf("\nlive:   %+v\nreplay: %+v", sa, sb)
}

// Request builders.

func strp(s string) *string { return &s }

func sourceTopology(topics ...string) *kmsg.StreamsGroupHeartbeatRequestTopology {
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID = "0"
	st.SourceTopics = topics
	t.Subtopologies = append(t.Subtopologies, st)
	return &t
}

// statefulTopology reads topic and keeps a store with changelog
// "app-store-changelog".
func statefulTopology(topic string) *kmsg.StreamsGroupHeartbeatRequestTopology {
	t := sourceTopology(topic)
	t.Subtopologies[0].StateChangelogTopics = []kmsg.TopicInfo{{Topic: "app-store-changelog", Configs: []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "compact"}}}}
	return t
}

func joinReq(group, member, process string, topo *kmsg.StreamsGroupHeartbeatRequestTopology) *kmsg.StreamsGroupHeartbeatRequest {
	r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	r.Version = 1
	r.Group = group
	r.MemberID = member
	r.MemberEpoch = 0
	r.EndpointInformationEpoch = -1
	r.RebalanceTimeoutMillis = 300000
	r.Topology = topo
	r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	r.ProcessID = strp(process)
	r.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
	return r
}

// hbReq is a later heartbeat; owned nil sends no task lists.
func hbReq(group, member string, epoch int32, owned *streams.TaskSets) *kmsg.StreamsGroupHeartbeatRequest {
	r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	r.Version = 1
	r.Group = group
	r.MemberID = member
	r.MemberEpoch = epoch
	r.RebalanceTimeoutMillis = -1
	if owned != nil {
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = streams.TasksToKmsg(owned.Active), streams.TasksToKmsg(owned.Standby), streams.TasksToKmsg(owned.Warmup)
	}
	return r
}

// assigned reads the task lists of a response; ok is false when they are null.
func assigned(r *kmsg.StreamsGroupHeartbeatResponse) (streams.TaskSets, bool) {
	if r.ActiveTasks == nil && r.StandbyTasks == nil && r.WarmupTasks == nil {
		return streams.TaskSets{}, false
	}
	return streams.TaskSets{Active: streams.TasksFromKmsg(r.ActiveTasks), Standby: streams.TasksFromKmsg(r.StandbyTasks), Warmup: streams.TasksFromKmsg(r.WarmupTasks)}, true
}

func tasks(s string, ps ...int32) streams.Tasks {
	b := streams.TasksBuilder{}
	for _, p := range ps {
		b.Add(s, p)
	}
	return b.Build()
}

func statusCodes(r *kmsg.StreamsGroupHeartbeatResponse) []int8 {
	var out []int8
	for _, s := range r.Status {
		out = append(out, s.StatusCode)
	}
	return out
}

func recordTypes(recs []streams.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		tomb := ""
		if r.Tombstone() {
			tomb = "-"
		}
		out[i] = fmt.Sprintf("%s%d:%s", tomb, r.Type, r.MemberID)
	}
	return out
}
