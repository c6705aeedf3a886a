package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

func wantError(t *testing.T, resp *kmsg.StreamsGroupHeartbeatResponse, want *kerr.Error) {
	t.Helper()
	if resp.ErrorCode != want.Code {
		t.Fatalf("error %d (%s), want %s", resp.ErrorCode, deref(resp.ErrorMessage), want.Message)
	}
	if resp.ErrorMessage == nil || *resp.ErrorMessage == "" {
		t.Fatalf("error %s without a message", want.Message)
	}
}

// §11.4 and §11.5: request validation.
func TestScenario04And05RequestValidation(t *testing.T) {
	cases := []struct {
		name string
		mut  func(r *kmsg.StreamsGroupHeartbeatRequest)
	}{
		{"empty member id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberID = " " }},
		{"empty group id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.Group = "" }},
		{"blank instance id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.InstanceID = strp("") }},
		{"blank rack id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.RackID = strp(" ") }},
		{"null topology on join", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.Topology = nil }},
		{"null task list on join", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.StandbyTasks = nil }},
		{"non-empty task list on join", func(r *kmsg.StreamsGroupHeartbeatRequest) {
			r.ActiveTasks = []kmsg.TaskIDs{{SubtopologyID: "0", Partitions: []int32{0}}}
		}},
		{"rebalance timeout -1 on join", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.RebalanceTimeoutMillis = -1 }},
		{"topology at epoch > 0", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberEpoch = 3 }},
		{"epoch -3", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberEpoch = -3; r.Topology = nil }},
		{"-2 without instance id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberEpoch = -2; r.Topology = nil }},
		{"some task lists null", func(r *kmsg.StreamsGroupHeartbeatRequest) {
			r.MemberEpoch = 3
			r.Topology = nil
			r.WarmupTasks = nil
		}},
		{"source topic regex", func(r *kmsg.StreamsGroupHeartbeatRequest) {
			r.Topology.Subtopologies[0].SourceTopicRegex = []string{"a.*"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			r := joinReq("g", "m1", "p1", sourceTopology("foo"))
			tc.mut(r)
			wantError(t, h.hb(r), kerr.InvalidRequest)
			if h.group("g") != nil || len(h.log.batches) != 0 {
				t.Fatal("a rejected request changed state")
			}
		})
	}
}

// §11.6: invalid topologies.
func TestScenario06InvalidTopology(t *testing.T) {
	cases := []struct {
		name string
		mut  func(t *kmsg.StreamsGroupHeartbeatRequestTopology)
	}{
		{"changelog with partitions", func(t *kmsg.StreamsGroupHeartbeatRequestTopology) {
			t.Subtopologies[0].StateChangelogTopics = []kmsg.TopicInfo{{Topic: "app-c", NumPartitions: 3}}
		}},
		{"internal topic", func(t *kmsg.StreamsGroupHeartbeatRequestTopology) {
			t.Subtopologies[0].SourceTopics = []string{"__consumer_offsets"}
		}},
		{"invalid name", func(t *kmsg.StreamsGroupHeartbeatRequestTopology) {
			t.Subtopologies[0].SourceTopics = []string{"bad topic"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			r := joinReq("g", "m1", "p1", sourceTopology("foo"))
			tc.mut(r.Topology)
			wantError(t, h.hb(r), kerr.StreamsInvalidTopology)
		})
	}
}

// §11.7: unknown group and unknown member.
func TestScenario07UnknownGroupAndMember(t *testing.T) {
	h := newHarness(t, nil)
	wantError(t, h.hb(hbReq("g", "m1", 1, nil)), kerr.GroupIDNotFound)
	h.md.SetTopic("foo", 2)
	h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	wantError(t, h.hb(hbReq("g", "m2", 1, nil)), kerr.UnknownMemberID)
	wantError(t, h.hb(hbReq("g", "m2", -1, nil)), kerr.UnknownMemberID)
}

// loadMemberAt100 puts a member at epoch 100 (previous 99) owning tasks 0-2
// of "foo" into the log and loads it.
func loadMemberAt100(h *harness) {
	h.md.SetTopic("foo", 3)
	topo := streams.TopologyFromRequest(sourceTopology("foo"))
	all := tasks("0", 0, 1, 2)
	recs := []streams.Record{
		{Type: streams.RecordMemberMetadata, GroupID: "g", MemberID: "m1", Value: &streams.MemberMetadataValue{ClientID: "client-m1", ClientHost: "/127.0.0.1", RebalanceTimeoutMs: 300000, ProcessID: "p1"}},
		{Type: streams.RecordTopology, GroupID: "g", Value: &streams.TopologyValue{Topology: topo}},
		{Type: streams.RecordGroupMetadata, GroupID: "g", Value: &streams.GroupMetadataValue{Epoch: 100, MetadataHash: streams.MetadataHash(h.md.Image(), []string{"foo"}), ValidatedTopologyEpoch: 0, LastAssignmentConfigs: streams.DefaultGroupConfig().AssignmentConfigs()}},
		{Type: streams.RecordTargetAssignmentMember, GroupID: "g", MemberID: "m1", Value: &streams.TargetAssignmentMemberValue{Tasks: streams.TaskSets{Active: all}}},
		{Type: streams.RecordTargetAssignmentMetadata, GroupID: "g", Value: &streams.TargetAssignmentMetadataValue{AssignmentEpoch: 100, AssignmentTimestamp: testStart.UnixMilli()}},
		{Type: streams.RecordCurrentMemberAssignment, GroupID: "g", MemberID: "m1", Value: &streams.CurrentMemberAssignmentValue{
			MemberEpoch: 100, PreviousMemberEpoch: 99, State: streams.MemberStable, Assigned: streams.TaskSets{Active: all},
			ActiveEpochs: map[streams.TaskID]int32{{Subtopology: "0", Partition: 0}: 99, {Subtopology: "0", Partition: 1}: 99, {Subtopology: "0", Partition: 2}: 100},
		}},
	}
	if err := h.log.MemoryLog.Append("g", recs); err != nil {
		h.t.Fatal(err)
	}
	if err := h.c.Load(h.log.All()); err != nil {
		h.t.Fatal(err)
	}
	h.checkReplay()
}

// §11.8: the epoch check, including the lost-response case.
func TestScenario08EpochCheck(t *testing.T) {
	h := newHarness(t, nil)
	loadMemberAt100(h)
	wantError(t, h.hb(hbReq("g", "m1", 200, nil)), kerr.FencedMemberEpoch)
	wantError(t, h.hb(hbReq("g", "m1", 50, nil)), kerr.FencedMemberEpoch)
	wantError(t, h.hb(hbReq("g", "m1", 99, nil)), kerr.FencedMemberEpoch)
	wantError(t, h.hb(hbReq("g", "m1", 99, &streams.TaskSets{Active: tasks("0", 0, 1, 2, 3)})), kerr.FencedMemberEpoch)
	resp := h.ok(hbReq("g", "m1", 99, &streams.TaskSets{Active: tasks("0", 0, 1)}))
	if resp.MemberEpoch != 100 {
		t.Fatalf("lost response: epoch %d, want 100", resp.MemberEpoch)
	}
	if _, ok := assigned(resp); ok {
		t.Fatal("lost response: task lists sent though nothing changed")
	}
	resp = h.ok(hbReq("g", "m1", 100, nil))
	if resp.MemberEpoch != 100 {
		t.Fatalf("epoch %d", resp.MemberEpoch)
	}
}

// §11.9: owned tasks outside the topology.
func TestScenario09OwnedTaskOutsideTopology(t *testing.T) {
	h := newHarness(t, nil)
	loadMemberAt100(h)
	wantError(t, h.hb(hbReq("g", "m1", 100, &streams.TaskSets{Active: tasks("7", 0)})), kerr.InvalidRequest)
	wantError(t, h.hb(hbReq("g", "m1", 100, &streams.TaskSets{Standby: tasks("0", 3)})), kerr.InvalidRequest)
	h.ok(hbReq("g", "m1", 100, &streams.TaskSets{Active: tasks("0", 2)}))
}

// A member rejoining with epoch 0 (after FENCED_MEMBER_EPOCH, with the same
// member id) gets its tasks back at its epoch, without a bump.
func TestRejoinWithEpochZero(t *testing.T) {
	h := newHarness(t, nil)
	loadMemberAt100(h)
	resp := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	got, ok := assigned(resp)
	if resp.MemberEpoch != 100 || !ok || !streams.TasksEqual(got.Active, tasks("0", 0, 1, 2)) || h.group("g").GroupEpoch != 100 {
		t.Fatalf("rejoin: epoch %d tasks %+v group epoch %d", resp.MemberEpoch, got, h.group("g").GroupEpoch)
	}
}
