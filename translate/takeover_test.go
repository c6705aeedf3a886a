package translate

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator"
)

// describedMember is a classic Streams member of a Stable group holding the
// given partitions of "foo".
func describedMember(t *testing.T, id string, parts ...int32) kmsg.DescribeGroupsResponseGroupMember {
	t.Helper()
	info := &classicstreams.SubscriptionInfo{Version: 11, LatestSupportedVersion: 11}
	ud, err := info.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var tps []classicstreams.TopicPartition
	var tasks []classicstreams.TaskID
	for _, p := range parts {
		tps = append(tps, classicstreams.TopicPartition{Topic: "foo", Partition: p})
		tasks = append(tasks, classicstreams.TaskID{Subtopology: 0, Partition: p})
	}
	sub := &classicstreams.ConsumerSubscription{Version: 3, Topics: []string{"foo"}, UserData: ud, OwnedPartitions: tps, GenerationID: 6}
	ai := &classicstreams.AssignmentInfo{Version: 11, CommonlySupportedVersion: 11, ActiveTasks: tasks}
	aib, err := ai.Encode()
	if err != nil {
		t.Fatal(err)
	}
	ca := &classicstreams.ConsumerAssignment{Version: 3, AssignedPartitions: tps, UserData: aib}
	return kmsg.DescribeGroupsResponseGroupMember{MemberID: id, ClientID: id, ClientHost: "/10.0.0.1", ProtocolMetadata: sub.Encode(), MemberAssignment: ca.Encode()}
}

func TestClassicGroupStateOf(t *testing.T) {
	d := &kmsg.DescribeGroupsResponseGroup{Group: "legacy", State: "Stable", ProtocolType: "consumer", Protocol: "stream",
		Members: []kmsg.DescribeGroupsResponseGroupMember{describedMember(t, "a", 0, 1, 2), describedMember(t, "b", 3, 4, 5)}}
	o := &ClassicObserver{}
	if _, err := ClassicGroupStateOf(d, o); !errors.Is(err, ErrNotStable) {
		t.Fatalf("no generation seen: %v", err)
	}
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 9, "legacy", 20000, 90000
	jr := kmsg.NewPtrJoinGroupResponse()
	jr.MemberID, jr.Generation = "a", 7
	o.ObserveJoin(join, jr)
	o.ObserveGeneration("legacy", "b", 6)
	if _, err := ClassicGroupStateOf(d, o); !errors.Is(err, ErrNotStable) {
		t.Fatalf("members at different generations: %v", err)
	}
	o.ObserveGeneration("legacy", "b", 7)
	st, err := ClassicGroupStateOf(d, o)
	if err != nil || st.Generation != 7 || len(st.Members) != 2 {
		t.Fatalf("state %+v %v", st, err)
	}
	if a, b := st.Members[0], st.Members[1]; a.SessionTimeoutMs != 20000 || a.RebalanceTimeoutMs != 90000 || b.SessionTimeoutMs != defaultStreamsSessionTimeoutMs || len(b.Assignment.AssignedPartitions) != 3 {
		t.Fatalf("members %+v %+v", a, b)
	}
	rebalancing := *d
	rebalancing.State = "PreparingRebalance"
	if _, err := ClassicGroupStateOf(&rebalancing, o); !errors.Is(err, ErrNotStable) {
		t.Fatalf("rebalancing: %v", err)
	}
	other := *d
	other.Protocol = "range"
	if _, err := ClassicGroupStateOf(&other, o); err == nil || errors.Is(err, ErrNotStable) {
		t.Fatalf("a plain consumer group: %v", err)
	}

	// The state takes the group over: classic members keep their tasks
	// at generation 7 and the streams member waits for them.
	md := coordinator.NewStaticMetadata()
	md.SetTopic("foo", 6)
	c, err := coordinator.New(coordinator.Options{Config: coordinator.DefaultConfig(), Clock: coordinator.NewManualClock(time.Unix(0, 0)), Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	first.Version, first.Group, first.MemberID, first.RebalanceTimeoutMillis, first.EndpointInformationEpoch = 1, "legacy", "s1", 60000, -1
	p := "ps"
	first.ProcessID = &p
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	sub.SubtopologyID, sub.SourceTopics = "0", []string{"foo"}
	topo.Subtopologies = append(topo.Subtopologies, sub)
	first.Topology = &topo
	first.ActiveTasks, first.StandbyTasks, first.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	first.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
	done := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
	c.TakeOverClassicGroup(st, first, coordinator.ClientInfo{ClientID: "s1"}, func(r *kmsg.StreamsGroupHeartbeatResponse) { done <- r })
	r := <-done
	if r.ErrorCode != 0 || len(r.ActiveTasks) != 0 {
		t.Fatalf("takeover: %d tasks %v", r.ErrorCode, r.ActiveTasks)
	}
	oc := coordinator.OffsetCommitRequest{GroupID: "legacy", MemberID: "a", MemberEpoch: 7}
	res := make(chan coordinator.OffsetCommitResult, 1)
	c.ValidateClassicOffsetCommit(oc, func(r coordinator.OffsetCommitResult) { res <- r })
	if r := <-res; r.Err != nil {
		t.Fatalf("commit at generation 7 after the takeover: %v", r.Err)
	}
}
