package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

func (h *harness) describe(version int16, groups ...string) *kmsg.StreamsGroupDescribeResponse {
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Version = version
	req.Groups = groups
	var resp *kmsg.StreamsGroupDescribeResponse
	h.c.StreamsGroupDescribe(req, func(r *kmsg.StreamsGroupDescribeResponse) { resp = r })
	if resp == nil {
		h.t.Fatal("no describe response")
	}
	return resp
}

// §11.31 and the fields of a described group.
func TestScenario31Describe(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 2)
	h.md.SetTopic("app-store-changelog", 2)
	j := joinReq("g", "m1", "p1", statefulTopology("foo"))
	j.InstanceID = strp("i1")
	j.RackID = strp("r1")
	j.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "h", Port: 9}
	j.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{{Key: "zone", Value: "z1"}}
	j.TaskOffsets = []kmsg.TaskOffset{{SubtopologyID: "0", Partition: 1, Offset: 42}}
	h.ok(j)

	resp := h.describe(1, "g", "", "missing")
	if len(resp.Groups) != 3 {
		t.Fatalf("%d groups", len(resp.Groups))
	}
	// Invalid ids come first, as Kafka answers them.
	if e := resp.Groups[0]; e.ErrorCode != kerr.InvalidGroupID.Code {
		t.Fatalf("empty id: %d", e.ErrorCode)
	}
	if e := resp.Groups[2]; e.ErrorCode != kerr.GroupIDNotFound.Code || e.Group != "missing" {
		t.Fatalf("missing: %+v", e)
	}
	g := resp.Groups[1]
	if g.ErrorCode != 0 || g.State != "Stable" || g.Epoch != 2 || g.AssignmentEpoch != 2 || g.AssignorName == nil || *g.AssignorName != "test" {
		t.Fatalf("group %+v", g)
	}
	if g.Topology == nil || len(g.Topology.Subtopologies) != 1 {
		t.Fatalf("topology %+v", g.Topology)
	}
	st := g.Topology.Subtopologies[0]
	if st.SubtopologyID != "0" || len(st.SourceTopics) != 1 || len(st.StateChangelogTopics) != 1 || st.StateChangelogTopics[0].NumPartitions != 2 {
		t.Fatalf("subtopology %+v", st)
	}
	if len(g.Members) != 1 {
		t.Fatalf("members %+v", g.Members)
	}
	m := g.Members[0]
	if m.MemberID != "m1" || m.MemberEpoch != 2 || deref(m.InstanceID) != "i1" || deref(m.RackID) != "r1" ||
		m.ClientID != "client-m1" || m.ClientHost != "/127.0.0.1" || m.ProcessID != "p1" || m.UserEndpoint == nil ||
		m.UserEndpoint.Port != 9 || len(m.ClientTags) != 1 || len(m.TaskOffsets) != 1 || m.IsClassic {
		t.Fatalf("member %+v", m)
	}
	if got := streams.TasksFromKmsg(m.Assignment.ActiveTasks); !streams.TasksEqual(got, tasks("0", 0, 1)) {
		t.Fatalf("assignment %+v", m.Assignment)
	}
	if got := streams.TasksFromKmsg(m.TargetAssignment.ActiveTasks); !streams.TasksEqual(got, tasks("0", 0, 1)) {
		t.Fatalf("target %+v", m.TargetAssignment)
	}
	if m.Assignment.StandbyTasks == nil || m.Assignment.WarmupTasks == nil {
		t.Fatal("null task lists in describe")
	}

	// Not ready: the stored topology is described.
	h.md.DeleteTopic("app-store-changelog")
	resp = h.describe(0, "g")
	if st := resp.Groups[0].Topology.Subtopologies[0]; st.StateChangelogTopics[0].NumPartitions != 0 {
		t.Fatalf("not ready subtopology %+v", st)
	}
}

// A classic member served inside the streams group is described with
// IsClassic, a streams member without: kafka-streams-groups --describe
// --members shows which instances still have to be rolled.
func TestDescribeClassicMember(t *testing.T) {
	w, _ := mixedGroup(t)
	g := w.h.describe(0, "g").Groups[0]
	classic := map[string]bool{}
	for _, m := range g.Members {
		classic[m.MemberID] = m.IsClassic
	}
	if len(classic) != 2 || !classic["c1"] || classic["s1"] {
		t.Fatalf("members described with IsClassic %v; want c1 true, s1 false", classic)
	}
}
