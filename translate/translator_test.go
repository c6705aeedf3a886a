package translate

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/internal/classictest"
)

// fixture: a real coordinator (asynchronous, virtual time) with a streams
// member holding the 4 tasks of "foo" in group "app".
func fixture(t *testing.T) (*Translator, *coordinator.Coordinator) {
	t.Helper()
	tr, c, _ := clockFixture(t)
	return tr, c
}

// clockFixture is fixture with the coordinator's virtual clock, which the
// translator runs on too.
func clockFixture(t *testing.T) (*Translator, *coordinator.Coordinator, *coordinator.ManualClock) {
	t.Helper()
	c, clock := classictest.StreamsGroup(t)
	return New(Options{Coordinator: c, NewMemberID: classictest.MemberIDs()}), c, clock
}

// call runs one request through the translator; forwarded reports forward.
func call(t *testing.T, tr *Translator, req kmsg.Request) (resp kmsg.Response, forwarded bool) {
	t.Helper()
	return classictest.Call(t, tr.Handle, req)
}

func TestClassicJoinSyncHeartbeatLeave(t *testing.T) {
	tr, c := fixture(t)

	// A dynamic v9 member without an id learns one first.
	r, _ := call(t, tr, classictest.JoinRequest(t, 9, "", "stream"))
	j := r.(*kmsg.JoinGroupResponse)
	if j.ErrorCode != kerr.MemberIDRequired.Code || j.MemberID == "" {
		t.Fatalf("first join: %+v", j)
	}
	id := j.MemberID
	r, _ = call(t, tr, classictest.JoinRequest(t, 9, id, "stream"))
	j = r.(*kmsg.JoinGroupResponse)
	if j.ErrorCode != 0 || j.MemberID != id || j.LeaderID != "" || len(j.Members) != 0 || j.Protocol == nil || *j.Protocol != "stream" || *j.ProtocolType != "consumer" || j.Generation < 2 {
		t.Fatalf("join: %+v", j)
	}
	gen := j.Generation

	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group, sync.MemberID, sync.Generation = 5, "app", id, gen
	pt, pn := "consumer", "stream"
	sync.ProtocolType, sync.Protocol = &pt, &pn
	r, _ = call(t, tr, sync)
	s := r.(*kmsg.SyncGroupResponse)
	if s.ErrorCode != 0 {
		t.Fatalf("sync: %d", s.ErrorCode)
	}
	ca, err := classicstreams.DecodeConsumerAssignment(s.MemberAssignment)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := classicstreams.DecodeAssignmentInfo(ca.UserData); err != nil || info.Version != 11 || len(info.ActiveTasks) != len(ca.AssignedPartitions) {
		t.Fatalf("assignment %+v %v", info, err)
	}

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.Generation = 4, "app", id, gen
	r, _ = call(t, tr, hb)
	// The member waits for tasks the streams member still holds: no
	// rejoin until they are released.
	if code := r.(*kmsg.HeartbeatResponse).ErrorCode; code != 0 {
		t.Fatalf("heartbeat: %d", code)
	}
	hb.Generation = gen + 5
	r, _ = call(t, tr, hb)
	if code := r.(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.IllegalGeneration.Code {
		t.Fatalf("heartbeat with a wrong generation: %d", code)
	}

	// The member's commits are valid at its generation (route/commit.go
	// validates them so).
	errc := make(chan error, 1)
	c.ValidateClassicOffsetCommit(streams.OffsetCommitRequest{GroupID: "app", MemberID: id, MemberEpoch: gen},
		func(res streams.OffsetCommitResult) { errc <- res.Err })
	if err := <-errc; err != nil {
		t.Fatalf("commit: %v", err)
	}

	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group = 3, "app"
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: id}, {MemberID: "ghost"}}
	r, _ = call(t, tr, leave)
	l := r.(*kmsg.LeaveGroupResponse)
	if l.ErrorCode != 0 || len(l.Members) != 2 || l.Members[0].ErrorCode != 0 || l.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave: %+v", l)
	}
}

func TestClassicJoinErrors(t *testing.T) {
	tr, _ := fixture(t)
	for _, tc := range []struct {
		name string
		req  *kmsg.JoinGroupRequest
		want int16
	}{
		{"not a streams protocol", classictest.JoinRequest(t, 9, "", "range"), kerr.InconsistentGroupProtocol.Code},
		{"an id never given out", classictest.JoinRequest(t, 9, "made-up", "stream"), kerr.UnknownMemberID.Code},
		{"session timeout too short", func() *kmsg.JoinGroupRequest {
			r := classictest.JoinRequest(t, 9, "", "stream")
			r.SessionTimeoutMillis = 100
			return r
		}(), kerr.InvalidSessionTimeout.Code},
	} {
		r, _ := call(t, tr, tc.req)
		if got := r.(*kmsg.JoinGroupResponse).ErrorCode; got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	// v3 and older get an id at once.
	r, _ := call(t, tr, classictest.JoinRequest(t, 3, "", "stream"))
	if j := r.(*kmsg.JoinGroupResponse); j.ErrorCode != 0 || j.MemberID == "" {
		t.Fatalf("v3 join: %+v", j)
	}
	// Another group goes upstream untouched.
	other := classictest.JoinRequest(t, 9, "", "stream")
	other.Group = "classic-app"
	if _, fwd := call(t, tr, other); !fwd {
		t.Fatal("join of a group not served here was answered")
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID = "classic-app", "m"
	if _, fwd := call(t, tr, hb); !fwd {
		t.Fatal("heartbeat of a group not served here was answered")
	}
}

// A static member gets its id at once (no MEMBER_ID_REQUIRED) and a restart
// under a new id takes the old one's place; the old id is fenced.
func TestClassicStaticJoin(t *testing.T) {
	tr, _ := fixture(t)
	inst := "app-1-1"
	req := classictest.JoinRequest(t, 9, "", "stream")
	req.InstanceID = &inst
	r, _ := call(t, tr, req)
	j := r.(*kmsg.JoinGroupResponse)
	if j.ErrorCode != 0 || j.MemberID == "" {
		t.Fatalf("static join: %+v", j)
	}
	old, gen := j.MemberID, j.Generation
	req = classictest.JoinRequest(t, 9, "", "stream")
	req.InstanceID = &inst
	r, _ = call(t, tr, req)
	if j2 := r.(*kmsg.JoinGroupResponse); j2.ErrorCode != 0 || j2.MemberID == old {
		t.Fatalf("static rejoin: %+v", j2)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.Generation, hb.InstanceID = 4, "app", old, gen, &inst
	r, _ = call(t, tr, hb)
	if code := r.(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.FencedInstanceID.Code {
		t.Fatalf("old static member: %d", code)
	}
}

// An instance that learnt its member id here just before its group stopped
// being served (handed back, or emptied) joins upstream without that id,
// which the broker would answer UNKNOWN_MEMBER_ID; other ids go as they are.
func TestJoinWithOurIDForwardedWithout(t *testing.T) {
	tr, c := fixture(t)
	r, _ := call(t, tr, classictest.JoinRequest(t, 9, "", "stream"))
	id := r.(*kmsg.JoinGroupResponse).MemberID
	if r.(*kmsg.JoinGroupResponse).ErrorCode != kerr.MemberIDRequired.Code || id == "" {
		t.Fatalf("first join: %+v", r)
	}
	classictest.StreamsHeartbeat(t, c, "s1", -1, nil) // the group is empty: not served any more

	forwarded := make(chan kmsg.Request, 1)
	fwd := func(rewritten kmsg.Request, answered func(kmsg.Response)) {
		if answered != nil {
			// The broker gives the member an id of its own.
			resp := kmsg.NewPtrJoinGroupResponse()
			resp.ErrorCode = kerr.MemberIDRequired.Code
			answered(resp)
		}
		forwarded <- rewritten
	}
	tr.Handle(classictest.JoinRequest(t, 9, id, "stream"), streams.ClientInfo{ClientID: "cc"}, func(r kmsg.Response) { t.Errorf("answered %+v", r) }, fwd)
	if got, ok := (<-forwarded).(*kmsg.JoinGroupRequest); !ok || got.MemberID != "" {
		t.Fatalf("join with the id given here forwarded as %+v, want without a member id", got)
	}
	tr.Handle(classictest.JoinRequest(t, 9, "broker-id", "stream"), streams.ClientInfo{ClientID: "cc"}, func(r kmsg.Response) { t.Errorf("answered %+v", r) }, fwd)
	if got := <-forwarded; got != nil {
		t.Fatalf("join with another id forwarded rewritten: %+v", got)
	}
	// Once the broker answered that join, the id is forgotten.
	tr.Handle(classictest.JoinRequest(t, 9, id, "stream"), streams.ClientInfo{ClientID: "cc"}, func(r kmsg.Response) { t.Errorf("answered %+v", r) }, fwd)
	if got := <-forwarded; got != nil {
		t.Fatalf("second join with a forgotten id rewritten: %+v", got)
	}
}
