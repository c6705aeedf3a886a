package coordinator

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// §11.36: a static member leaves with -2 and comes back under a new member
// id with the same process: replacement records, no bump, same tasks.
func TestScenario36StaticRejoin(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 4)
	j := joinReq("g", "a1", "p1", sourceTopology("foo"))
	j.InstanceID = strp("i1")
	h.ok(j)
	j = joinReq("g", "b1", "p2", sourceTopology("foo"))
	j.InstanceID = strp("i2")
	h.ok(j)
	g := h.group("g")
	r := h.ok(hbReq("g", "a1", 2, nil))
	got, _ := assigned(r)
	r = h.ok(hbReq("g", "a1", r.MemberEpoch, &got))
	h.ok(hbReq("g", "b1", 3, &streams.TaskSets{}))
	before := g.Members["a1"].CurrentAssignment().Assigned
	epoch := g.GroupEpoch

	logs := captureLogs(h)
	leave := hbReq("g", "a1", -2, nil)
	leave.InstanceID = strp("i1")
	resp := h.ok(leave)
	logs.want(t, "info", "[GroupId g][MemberId a1] Static member a1 with instance id i1 temporarily left the streams group.")
	if resp.MemberEpoch != -2 || g.GroupEpoch != epoch {
		t.Fatalf("static leave: epoch %d group %d", resp.MemberEpoch, g.GroupEpoch)
	}
	if got := recordTypes(h.log.last()); !slices.Equal(got, []string{"22:a1"}) {
		t.Fatalf("static leave records %v", got)
	}
	if e := g.Members["a1"].CurrentAssignment().ActiveEpochs[streams.TaskID{Subtopology: "0", Partition: 0}]; e != 0 {
		t.Fatalf("task epoch %d after -2, want 0", e)
	}

	j = joinReq("g", "a2", "p1", sourceTopology("foo"))
	j.InstanceID = strp("i1")
	resp = h.ok(j)
	got, _ = assigned(resp)
	if g.GroupEpoch != epoch || !got.Equal(before) || resp.MemberEpoch != g.AssignmentEpoch {
		t.Fatalf("rejoin: group %d/%d tasks %+v want %+v epoch %d", g.GroupEpoch, epoch, got, before, resp.MemberEpoch)
	}
	// The copy under the new id, then its new client id, then the
	// reconciliation to the assignment epoch.
	want := []string{"-22:a1", "-21:a1", "-19:a1", "19:a2", "21:a2", "22:a2", "19:a2", "22:a2"}
	if got := recordTypes(h.log.last()); !slices.Equal(got, want) {
		t.Fatalf("replacement records %v, want %v", got, want)
	}
	if g.Members["a1"] != nil || g.StaticMembers["i1"] != "a2" {
		t.Fatal("old member still there")
	}
	logs.want(t, "info", "Static member with instance id i1 re-joins the streams group using the streams protocol. Created a new member a2 to replace the existing member a1.")
	if n := len(logs.find(t, "info", "Bumped")); n != 0 {
		t.Fatalf("%d epoch bumps logged for a replacement that keeps the epoch", n)
	}

	// A new process id is a real change: bump.
	leave = hbReq("g", "a2", -2, nil)
	leave.InstanceID = strp("i1")
	h.ok(leave)
	j = joinReq("g", "a3", "p9", sourceTopology("foo"))
	j.InstanceID = strp("i1")
	h.ok(j)
	if g.GroupEpoch != epoch+1 {
		t.Fatalf("new process id did not bump: %d", g.GroupEpoch)
	}
}

// §11.37: instance ids in use.
func TestScenario37InstanceIDErrors(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 2)
	j := joinReq("g", "a1", "p1", sourceTopology("foo"))
	j.InstanceID = strp("i1")
	r := h.ok(j)
	j = joinReq("g", "a2", "p1", sourceTopology("foo"))
	j.InstanceID = strp("i1")
	wantError(t, h.hb(j), kerr.UnreleasedInstanceID)
	hb := hbReq("g", "a2", r.MemberEpoch, nil)
	hb.InstanceID = strp("i1")
	wantError(t, h.hb(hb), kerr.FencedInstanceID)
	hb = hbReq("g", "a1", r.MemberEpoch, nil)
	hb.InstanceID = strp("i9")
	wantError(t, h.hb(hb), kerr.UnknownMemberID)
	leave := hbReq("g", "a2", -1, nil)
	leave.InstanceID = strp("i1")
	wantError(t, h.hb(leave), kerr.FencedInstanceID)
	// A static member leaving for good with -1 is fenced.
	leave = hbReq("g", "a1", -1, nil)
	leave.InstanceID = strp("i1")
	h.ok(leave)
	if g := h.group("g"); len(g.Members) != 0 || len(g.StaticMembers) != 0 {
		t.Fatal("static member not removed")
	}
}

// The endpoint-information epoch across a static member's restart, case by
// case as Kafka's testStaticMemberRejoinUpdatesUserEndpointInformationEpoch.
func TestStaticRejoinEndpointEpoch(t *testing.T) {
	ep := func(host string) *kmsg.StreamsGroupHeartbeatRequestUserEndpoint {
		if host == "" {
			return nil
		}
		return &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: host, Port: 8080}
	}
	cases := []struct {
		first, second           string
		firstEpoch, secondEpoch int32
		firstSent, secondSent   int // -1: null list
	}{
		{"", "bar.com", 0, 1, -1, 1},
		{"", "", 0, 0, -1, -1},
		{"foo.com", "", 1, 2, 1, 0},
		{"foo.com", "foo.com", 1, 1, 1, 1},
		{"foo.com", "bar.com", 1, 2, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.first+"->"+tc.second, func(t *testing.T) {
			h := newHarness(t, nil)
			h.md.SetTopic("foo", 3)
			// An existing, empty group.
			h.ok(joinReq("g", "x", "px", sourceTopology("foo")))
			h.ok(hbReq("g", "x", -1, nil))
			join := func(member, host string) *kmsg.StreamsGroupHeartbeatResponse {
				j := joinReq("g", member, "p1", sourceTopology("foo"))
				j.InstanceID = strp("i1")
				j.EndpointInformationEpoch = 0
				j.UserEndpoint = ep(host)
				return h.ok(j)
			}
			check := func(r *kmsg.StreamsGroupHeartbeatResponse, epoch int32, sent int) {
				t.Helper()
				if r.EndpointInformationEpoch != epoch {
					t.Fatalf("endpoint epoch %d, want %d", r.EndpointInformationEpoch, epoch)
				}
				if (sent < 0) != (r.PartitionsByUserEndpoint == nil) || (sent >= 0 && len(r.PartitionsByUserEndpoint) != sent) {
					t.Fatalf("endpoints %+v, want %d", r.PartitionsByUserEndpoint, sent)
				}
			}
			check(join("old", tc.first), tc.firstEpoch, tc.firstSent)
			leave := hbReq("g", "old", -2, nil)
			leave.InstanceID = strp("i1")
			h.ok(leave)
			check(join("new", tc.second), tc.secondEpoch, tc.secondSent)
		})
	}
}
