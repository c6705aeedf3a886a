package translate

import (
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
)

type fakeUpstream struct {
	mu   sync.Mutex
	left []string
	done []string
}

func (f *fakeUpstream) LeaveAnchor(group string, done func(error)) {
	f.mu.Lock()
	f.left = append(f.left, group)
	f.mu.Unlock()
	done(nil)
}

func (f *fakeUpstream) HandBackDone(group string) {
	f.mu.Lock()
	f.done = append(f.done, group)
	f.mu.Unlock()
}

// memberConn is a classic member's connection through the proxy: what the
// translator forwards on it goes to a broker that answers a JoinGroup
// without a member id with MEMBER_ID_REQUIRED and an id of its own.
type memberConn struct {
	t         *testing.T
	mu        sync.Mutex
	forwarded []kmsg.Request
	answers   chan kmsg.Response
}

func newMemberConn(t *testing.T) *memberConn {
	return &memberConn{t: t, answers: make(chan kmsg.Response, 4)}
}

func (c *memberConn) respond(r kmsg.Response) { c.answers <- r }

func (c *memberConn) forward(rewritten kmsg.Request, answered func(kmsg.Response)) {
	c.mu.Lock()
	c.forwarded = append(c.forwarded, rewritten)
	c.mu.Unlock()
	j, ok := rewritten.(*kmsg.JoinGroupRequest)
	if !ok {
		c.t.Errorf("forwarded %T as it came, want a rewritten JoinGroup", rewritten)
		return
	}
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.ErrorCode, resp.MemberID, resp.Generation = kerr.MemberIDRequired.Code, "cc-upstream-uuid", -1
	if j.MemberID != "" {
		resp.ErrorCode = kerr.UnknownMemberID.Code
	}
	if answered != nil {
		answered(resp)
	}
	c.answers <- resp
}

// barrierWatch is the coordinator, telling up when a hand-back's barrier is
// up.
type barrierWatch struct {
	*coordinator.Coordinator
	up chan struct{}
}

func (b barrierWatch) BeginHandBack(group string, done func(error)) {
	b.Coordinator.BeginHandBack(group, func(err error) {
		done(err)
		if err == nil {
			b.up <- struct{}{}
		}
	})
}

// watchBarrier makes tr's coordinator c a barrierWatch; the channel gets a
// value each time a barrier goes up.
func watchBarrier(tr *Translator, c *coordinator.Coordinator) <-chan struct{} {
	up := make(chan struct{}, 4)
	tr.c = barrierWatch{Coordinator: c, up: up}
	return up
}

// The last streams member leaves; the classic member is pulled into the
// barrier, its JoinGroup held, the anchor leaves, and the JoinGroup goes
// upstream with an empty member id.
func TestHandBackToUpstream(t *testing.T) {
	tr, c, clock := clockFixture(t)
	up := &fakeUpstream{}
	tr.opts.Upstream = up
	barrierUp := watchBarrier(tr, c)

	r, _ := call(t, tr, streamsJoinRequest(t, 9, "", "stream"))
	id := r.(*kmsg.JoinGroupResponse).MemberID
	r, _ = call(t, tr, streamsJoinRequest(t, 9, id, "stream"))
	gen := r.(*kmsg.JoinGroupResponse).Generation

	leave := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	leave.Version, leave.Group, leave.MemberID, leave.MemberEpoch = 1, "app", "s1", -1
	done := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
	c.StreamsGroupHeartbeat(leave, coordinator.ClientInfo{}, func(r *kmsg.StreamsGroupHeartbeatResponse) { done <- r })
	if r := <-done; r.ErrorCode != 0 {
		t.Fatalf("leave: %d", r.ErrorCode)
	}

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.Generation = 4, "app", id, gen
	r, _ = call(t, tr, hb)
	if code := r.(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat: %d", code)
	}
	<-barrierUp

	conn := newMemberConn(t)
	tr.Handle(streamsJoinRequest(t, 9, id, "stream"), coordinator.ClientInfo{ClientID: "cc"}, conn.respond, conn.forward)
	// An instance starting meanwhile learns a member id here, then its
	// join is held too, to go upstream without that id.
	r, _ = call(t, tr, streamsJoinRequest(t, 9, "", "stream"))
	newcomerID := r.(*kmsg.JoinGroupResponse).MemberID
	newcomer := newMemberConn(t)
	tr.Handle(streamsJoinRequest(t, 9, newcomerID, "stream"), coordinator.ClientInfo{ClientID: "cc"}, newcomer.respond, newcomer.forward)
	select {
	case r := <-conn.answers:
		t.Fatalf("held join answered: %+v", r)
	case r := <-newcomer.answers:
		t.Fatalf("newcomer's join answered during the barrier: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	clock.Advance(handBackPoll)
	select {
	case r := <-newcomer.answers:
		if j := r.(*kmsg.JoinGroupResponse); j.ErrorCode != kerr.MemberIDRequired.Code || j.MemberID != "cc-upstream-uuid" {
			t.Fatalf("newcomer's upstream answer %+v", j)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("newcomer's held join never answered")
	}
	var resp kmsg.Response
	select {
	case resp = <-conn.answers:
	case <-time.After(5 * time.Second):
		t.Fatal("held join never answered")
	}
	j := resp.(*kmsg.JoinGroupResponse)
	if j.ErrorCode != kerr.MemberIDRequired.Code || j.MemberID != "cc-upstream-uuid" {
		t.Fatalf("upstream answer %+v", j)
	}
	select {
	case r := <-conn.answers:
		t.Fatalf("held join answered twice: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if len(up.left) != 1 || len(conn.forwarded) != 1 || conn.forwarded[0].(*kmsg.JoinGroupRequest).MemberID != "" {
		t.Fatalf("anchor left %v, forwarded on the member's connection %+v", up.left, conn.forwarded)
	}
	if len(up.done) != 1 {
		t.Fatalf("hand-back done reported %d times, want once after the answer", len(up.done))
	}
	if c.Owns("app") {
		t.Fatal("group still held here")
	}
}

// A streams member joining during the barrier aborts the hand-back: the held
// JoinGroup is served by the streams group, nothing goes upstream.
func TestHandBackAbortedByStreamsJoin(t *testing.T) {
	tr, c, clock := clockFixture(t)
	up := &fakeUpstream{}
	tr.opts.Upstream = up
	barrierUp := watchBarrier(tr, c)

	r, _ := call(t, tr, streamsJoinRequest(t, 9, "", "stream"))
	id := r.(*kmsg.JoinGroupResponse).MemberID
	r, _ = call(t, tr, streamsJoinRequest(t, 9, id, "stream"))
	gen := r.(*kmsg.JoinGroupResponse).Generation
	done := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
	leave := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	leave.Version, leave.Group, leave.MemberID, leave.MemberEpoch = 1, "app", "s1", -1
	c.StreamsGroupHeartbeat(leave, coordinator.ClientInfo{}, func(r *kmsg.StreamsGroupHeartbeatResponse) { done <- r })
	<-done
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.Generation = 4, "app", id, gen
	call(t, tr, hb)
	<-barrierUp

	conn := newMemberConn(t)
	answered := conn.answers
	tr.Handle(streamsJoinRequest(t, 9, id, "stream"), coordinator.ClientInfo{ClientID: "cc"}, conn.respond, conn.forward)

	// A new streams member arrives before the barrier completes.
	join := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	join.Version, join.Group, join.MemberID, join.RebalanceTimeoutMillis, join.EndpointInformationEpoch = 1, "app", "s2", 60000, -1
	p := "p2"
	join.ProcessID = &p
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{"foo"}
	topo.Subtopologies = append(topo.Subtopologies, st)
	join.Topology = &topo
	join.ActiveTasks, join.StandbyTasks, join.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	join.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
	c.StreamsGroupHeartbeat(join, coordinator.ClientInfo{ClientID: "s2"}, func(r *kmsg.StreamsGroupHeartbeatResponse) { done <- r })
	if r := <-done; r.ErrorCode != 0 {
		t.Fatalf("s2 join: %d", r.ErrorCode)
	}
	clock.Advance(handBackPoll)
	select {
	case r := <-answered:
		if j := r.(*kmsg.JoinGroupResponse); j.ErrorCode != 0 || j.MemberID != id || j.Generation < gen {
			t.Fatalf("re-run join: %+v", j)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("held join never answered")
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if len(up.left) != 0 || len(conn.forwarded) != 0 || len(up.done) != 0 || !c.Owns("app") {
		t.Fatalf("aborted hand-back touched the upstream: %v %v", up.left, conn.forwarded)
	}
}

// An instance that learnt its member id here just before its group stopped
// being served (handed back, or emptied) joins upstream without that id,
// which the broker would answer UNKNOWN_MEMBER_ID; other ids go as they are.
func TestJoinWithOurIDForwardedWithout(t *testing.T) {
	tr, c := fixture(t)
	r, _ := call(t, tr, streamsJoinRequest(t, 9, "", "stream"))
	id := r.(*kmsg.JoinGroupResponse).MemberID
	if r.(*kmsg.JoinGroupResponse).ErrorCode != kerr.MemberIDRequired.Code || id == "" {
		t.Fatalf("first join: %+v", r)
	}
	leave := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	leave.Version, leave.Group, leave.MemberID, leave.MemberEpoch = 1, "app", "s1", -1
	done := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
	c.StreamsGroupHeartbeat(leave, coordinator.ClientInfo{}, func(r *kmsg.StreamsGroupHeartbeatResponse) { done <- r })
	<-done // the group is empty: not served any more

	forwarded := make(chan kmsg.Request, 1)
	fwd := func(rewritten kmsg.Request, _ func(kmsg.Response)) { forwarded <- rewritten }
	tr.Handle(streamsJoinRequest(t, 9, id, "stream"), coordinator.ClientInfo{ClientID: "cc"}, func(r kmsg.Response) { t.Errorf("answered %+v", r) }, fwd)
	if got, ok := (<-forwarded).(*kmsg.JoinGroupRequest); !ok || got.MemberID != "" {
		t.Fatalf("join with the id given here forwarded as %+v, want without a member id", got)
	}
	tr.Handle(streamsJoinRequest(t, 9, "broker-id", "stream"), coordinator.ClientInfo{ClientID: "cc"}, func(r kmsg.Response) { t.Errorf("answered %+v", r) }, fwd)
	if got := <-forwarded; got != nil {
		t.Fatalf("join with another id forwarded rewritten: %+v", got)
	}
	// Once used, the id is forgotten.
	tr.Handle(streamsJoinRequest(t, 9, id, "stream"), coordinator.ClientInfo{ClientID: "cc"}, func(r kmsg.Response) { t.Errorf("answered %+v", r) }, fwd)
	if got := <-forwarded; got != nil {
		t.Fatalf("second join with a forgotten id rewritten: %+v", got)
	}
}
