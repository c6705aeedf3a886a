package coordinator

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// §11.10: a missing source topic keeps the group NotReady; when it appears,
// the next heartbeat bumps the epoch and assigns.
func TestScenario10MissingSourceTopic(t *testing.T) {
	h := newHarness(t, nil)
	resp := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	if !slices.Equal(statusCodes(resp), []int8{streams.StatusMissingSourceTopics}) {
		t.Fatalf("status %v", statusCodes(resp))
	}
	if got, _ := assigned(resp); !got.IsEmpty() {
		t.Fatalf("tasks %+v", got)
	}
	g := h.group("g")
	if g.State() != streams.GroupNotReady || g.ValidatedTopologyEpoch != -1 {
		t.Fatalf("state %v validated %d", g.State(), g.ValidatedTopologyEpoch)
	}
	epoch := g.GroupEpoch
	resp = h.ok(hbReq("g", "m1", resp.MemberEpoch, nil))
	if g.GroupEpoch != epoch || !slices.Equal(statusCodes(resp), []int8{streams.StatusMissingSourceTopics}) {
		t.Fatal("idle heartbeat changed the epoch or lost the status")
	}
	h.md.SetTopic("foo", 2)
	resp = h.ok(hbReq("g", "m1", resp.MemberEpoch, nil))
	if g.GroupEpoch != epoch+1 || len(resp.Status) != 0 || g.State() != streams.GroupStable {
		t.Fatalf("after topic: epoch %d status %v state %v", g.GroupEpoch, statusCodes(resp), g.State())
	}
	if got, _ := assigned(resp); !streams.TasksEqual(got.Active, tasks("0", 0, 1)) {
		t.Fatalf("tasks %+v", got)
	}
}

// §11.11: missing internal topics are created with the decided partitions
// and the default replication factor; tasks follow once they exist.
func TestScenario11MissingInternalTopics(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 3)
	resp := h.ok(joinReq("g", "m1", "p1", statefulTopology("foo")))
	if !slices.Equal(statusCodes(resp), []int8{streams.StatusMissingInternalTopics}) || !strings.Contains(resp.Status[0].StatusDetail, "app-store-changelog") {
		t.Fatalf("status %+v", resp.Status)
	}
	if len(h.creator.calls) != 1 {
		t.Fatalf("%d CreateTopics calls", len(h.creator.calls))
	}
	want := streams.CreatableTopic{Name: "app-store-changelog", Partitions: 3, ReplicationFactor: -1, Configs: []streams.KeyValue{{Key: "cleanup.policy", Value: "compact"}}}
	if got := h.creator.calls[0]; len(got) != 1 || got[0].Name != want.Name || got[0].Partitions != 3 || got[0].ReplicationFactor != -1 || !slices.Equal(got[0].Configs, want.Configs) {
		t.Fatalf("created %+v", got)
	}
	// While the creation is in flight, heartbeats do not ask again.
	resp = h.ok(hbReq("g", "m1", resp.MemberEpoch, nil))
	if len(h.creator.calls) != 1 {
		t.Fatalf("%d CreateTopics calls while in flight", len(h.creator.calls))
	}
	// A failure shows in the status detail.
	h.creator.dones[0](map[string]error{"app-store-changelog": kerr.TopicAuthorizationFailed})
	resp = h.ok(hbReq("g", "m1", resp.MemberEpoch, nil))
	if !strings.Contains(resp.Status[0].StatusDetail, "Creation failed: app-store-changelog") {
		t.Fatalf("detail %q", resp.Status[0].StatusDetail)
	}
	if len(h.creator.calls) != 2 {
		t.Fatalf("%d CreateTopics calls after the failure", len(h.creator.calls))
	}
	h.md.SetTopic("app-store-changelog", 3)
	resp = h.ok(hbReq("g", "m1", resp.MemberEpoch, nil))
	if len(resp.Status) != 0 {
		t.Fatalf("status %+v", resp.Status)
	}
	if got, _ := assigned(resp); !streams.TasksEqual(got.Active, tasks("0", 0, 1, 2)) {
		t.Fatalf("tasks %+v", got)
	}
}

// §11.12: copartitioned sources with different counts, or a changelog with
// the wrong count.
func TestScenario12IncorrectlyPartitioned(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("a", 2)
	h.md.SetTopic("b", 3)
	topo := sourceTopology("a", "b")
	topo.Subtopologies[0].CopartitionGroups = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup{{SourceTopics: []int16{0, 1}}}
	resp := h.ok(joinReq("g", "m1", "p1", topo))
	if !slices.Equal(statusCodes(resp), []int8{streams.StatusIncorrectlyPartitionedTopics}) {
		t.Fatalf("copartition: status %+v", resp.Status)
	}

	h2 := newHarness(t, nil)
	h2.md.SetTopic("foo", 3)
	h2.md.SetTopic("app-store-changelog", 5)
	resp = h2.ok(joinReq("g", "m1", "p1", statefulTopology("foo")))
	if !slices.Equal(statusCodes(resp), []int8{streams.StatusIncorrectlyPartitionedTopics}) {
		t.Fatalf("changelog: status %+v", resp.Status)
	}
	if len(h2.creator.calls) != 0 {
		t.Fatal("created topics for an incorrectly partitioned topology")
	}
}

// §11.13: unresolvable repartition topics fail the heartbeat.
func TestScenario13UnresolvableRepartition(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("in", 2)
	topo := sourceTopology("in")
	// Subtopology 1 reads a repartition topic nobody writes.
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID = "1"
	st.RepartitionSourceTopics = []kmsg.TopicInfo{{Topic: "app-orphan-repartition"}}
	topo.Subtopologies = append(topo.Subtopologies, st)
	resp := h.hb(joinReq("g", "m1", "p1", topo))
	wantError(t, resp, kerr.StreamsInvalidTopology)
	if g := h.group("g"); g != nil {
		t.Fatalf("failed join left a group: %+v", snapshot(g))
	}

	// A loop: 0 reads r1 and writes r2, 1 reads r2 and writes r1.
	loop := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	a := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	a.SubtopologyID = "0"
	a.RepartitionSourceTopics = []kmsg.TopicInfo{{Topic: "app-r1"}}
	a.RepartitionSinkTopics = []string{"app-r2"}
	b := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	b.SubtopologyID = "1"
	b.RepartitionSourceTopics = []kmsg.TopicInfo{{Topic: "app-r2"}}
	b.RepartitionSinkTopics = []string{"app-r1"}
	loop.Subtopologies = append(loop.Subtopologies, a, b)
	wantError(t, h.hb(joinReq("g", "m1", "p1", &loop)), kerr.StreamsInvalidTopology)
}

// §11.14: tasks and changelog partitions follow the largest input; the IQ
// mapping lists only the partitions that exist.
func TestScenario14TasksFromLargestInput(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("a", 4)
	h.md.SetTopic("b", 2)
	topo := sourceTopology("a", "b")
	topo.Subtopologies[0].StateChangelogTopics = []kmsg.TopicInfo{{Topic: "app-store-changelog"}}
	join := joinReq("g", "m1", "p1", topo)
	join.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "h1", Port: 8080}
	resp := h.ok(join)
	if len(h.creator.calls) != 1 || h.creator.calls[0][0].Partitions != 4 {
		t.Fatalf("created %+v", h.creator.calls)
	}
	h.md.SetTopic("app-store-changelog", 4)
	resp = h.ok(hbReq("g", "m1", resp.MemberEpoch, nil))
	got, _ := assigned(resp)
	if !streams.TasksEqual(got.Active, tasks("0", 0, 1, 2, 3)) {
		t.Fatalf("tasks %+v", got)
	}
	ep := resp.PartitionsByUserEndpoint
	if len(ep) != 1 || ep[0].UserEndpoint.Host != "h1" {
		t.Fatalf("endpoints %+v", ep)
	}
	parts := map[string][]int32{}
	for _, p := range ep[0].ActivePartitions {
		parts[p.Topic] = p.Partitions
	}
	if !slices.Equal(parts["a"], []int32{0, 1, 2, 3}) || !slices.Equal(parts["b"], []int32{0, 1}) {
		t.Fatalf("IQ partitions %+v", parts)
	}
}

// §11.15: a member behind the group's topology epoch gets STALE_TOPOLOGY and
// is still assigned; the same epoch with another topology is rejected.
func TestScenario15StaleTopology(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 2)
	t1 := sourceTopology("foo")
	t1.Epoch = 1
	h.ok(joinReq("g", "m1", "p1", t1))
	resp := h.ok(joinReq("g", "m2", "p2", sourceTopology("foo")))
	if !slices.Equal(statusCodes(resp), []int8{streams.StatusStaleTopology}) {
		t.Fatalf("status %+v", resp.Status)
	}
	// m2's task is still m1's until m1 revokes it: the target counts.
	if g := h.group("g"); streams.TasksCount(g.Target["m2"].Active) != 1 || g.Members["m2"].CurrentAssignment().State != streams.MemberUnreleasedTasks {
		t.Fatalf("stale member not assigned: target %+v", g.Target["m2"])
	}
	other := sourceTopology("foo", "bar")
	other.Epoch = 1
	wantError(t, h.hb(joinReq("g", "m3", "p3", other)), kerr.InvalidRequest)
}
