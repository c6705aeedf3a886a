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
	mu        sync.Mutex
	left      []string
	forwarded []*kmsg.JoinGroupRequest
}

func (f *fakeUpstream) LeaveAnchor(group string, done func(error)) {
	f.mu.Lock()
	f.left = append(f.left, group)
	f.mu.Unlock()
	done(nil)
}

// Forward answers a JoinGroup as a broker does one without a member id.
func (f *fakeUpstream) Forward(req kmsg.Request, respond func(kmsg.Response, error)) {
	j := req.(*kmsg.JoinGroupRequest)
	f.mu.Lock()
	f.forwarded = append(f.forwarded, j)
	f.mu.Unlock()
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.ErrorCode, resp.MemberID, resp.Generation = kerr.MemberIDRequired.Code, "upstream-id", -1
	respond(resp, nil)
}

// The last streams member leaves; the classic member is pulled into the
// barrier, its JoinGroup held, the anchor leaves, and the JoinGroup goes
// upstream with an empty member id.
func TestHandBackToUpstream(t *testing.T) {
	tr, c := fixture(t)
	up := &fakeUpstream{}
	polls := make(chan func(), 8)
	tr.opts.Upstream = up
	tr.opts.AfterFunc = func(_ time.Duration, f func()) { polls <- f }
	clock := time.Unix(100, 0)
	tr.opts.Now = func() time.Time { clock = clock.Add(time.Second); return clock }

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
	poll := <-polls // the barrier is up

	answered := make(chan kmsg.Response, 1)
	tr.Handle(streamsJoinRequest(t, 9, id, "stream"), coordinator.ClientInfo{ClientID: "cc"}, func(r kmsg.Response) { answered <- r }, func() { t.Error("forwarded as is") })
	select {
	case r := <-answered:
		t.Fatalf("held join answered: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	poll()
	var resp kmsg.Response
	select {
	case resp = <-answered:
	case <-time.After(5 * time.Second):
		t.Fatal("held join never answered")
	}
	j := resp.(*kmsg.JoinGroupResponse)
	if j.ErrorCode != kerr.MemberIDRequired.Code || j.MemberID != "upstream-id" {
		t.Fatalf("upstream answer %+v", j)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.left) != 1 || len(up.forwarded) != 1 || up.forwarded[0].MemberID != "" {
		t.Fatalf("anchor left %v, forwarded %+v", up.left, up.forwarded)
	}
	if c.Owns("app") {
		t.Fatal("group still held here")
	}
}

// A streams member joining during the barrier aborts the hand-back: the held
// JoinGroup is served by the streams group, nothing goes upstream.
func TestHandBackAbortedByStreamsJoin(t *testing.T) {
	tr, c := fixture(t)
	up := &fakeUpstream{}
	polls := make(chan func(), 8)
	tr.opts.Upstream = up
	tr.opts.AfterFunc = func(_ time.Duration, f func()) { polls <- f }
	clock := time.Unix(100, 0)
	tr.opts.Now = func() time.Time { clock = clock.Add(time.Second); return clock }

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
	poll := <-polls

	answered := make(chan kmsg.Response, 1)
	tr.Handle(streamsJoinRequest(t, 9, id, "stream"), coordinator.ClientInfo{ClientID: "cc"}, func(r kmsg.Response) { answered <- r }, func() { t.Error("forwarded") })

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
	poll()
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
	if len(up.left) != 0 || len(up.forwarded) != 0 || !c.Owns("app") {
		t.Fatalf("aborted hand-back touched the upstream: %v %v", up.left, up.forwarded)
	}
}
