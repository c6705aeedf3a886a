package classicstreams

import (
	"reflect"
	"testing"
)

const rep = "app-rep-0000000003-repartition"

// Subtopology 0 reads input; 1 reads the repartition topic; 2 reads a topic
// that does not exist in the cluster; 5 exists after a gap (a global store
// took 3 and 4).
func testTopology(t *testing.T) (*TaskTopology, PartitionCounts) {
	t.Helper()
	topo, err := NewTaskTopologyFromStreams(map[string][]string{
		"0": {"input"},
		"1": {rep},
		"2": {"missing"},
		"5": {"left", "right"},
	})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int32{"input": 3, rep: 3, "left": 4, "right": 2}
	return topo, func(topic string) (int32, bool) { n, ok := counts[topic]; return n, ok }
}

func tp(topic string, p int32) TopicPartition { return TopicPartition{Topic: topic, Partition: p} }
func task(s, p int32) TaskID                  { return TaskID{Subtopology: s, Partition: p} }

func TestTaskTopologyRejectsSharedTopic(t *testing.T) {
	if _, err := NewTaskTopology(map[int32][]string{0: {"a"}, 1: {"a"}}); err == nil {
		t.Fatal("a topic read by two subtopologies was accepted")
	}
	if _, err := NewTaskTopologyFromStreams(map[string][]string{"01": {"a"}}); err == nil {
		t.Fatal(`subtopology id "01" is not what the Java client sends`)
	}
}

func TestAlignActiveTasks(t *testing.T) {
	topo, counts := testTopology(t)
	// Research vector V10: partitions R-0, input-0, input-1 sort as
	// R < input, so the list is [1_0, 0_0, 0_1].
	parts, active, err := AlignActiveTasks([]TaskID{task(0, 1), task(1, 0), task(0, 0)}, topo, counts)
	if err != nil {
		t.Fatal(err)
	}
	wantParts := []TopicPartition{tp(rep, 0), tp("input", 0), tp("input", 1)}
	wantTasks := []TaskID{task(1, 0), task(0, 0), task(0, 1)}
	if !reflect.DeepEqual(parts, wantParts) || !reflect.DeepEqual(active, wantTasks) {
		t.Fatalf("got %v %v", parts, active)
	}
	// A task with two input topics appears once per partition; a partition
	// beyond a topic's count is left out (right has 2 partitions).
	parts, active, err = AlignActiveTasks([]TaskID{task(5, 3), task(5, 1)}, topo, counts)
	if err != nil {
		t.Fatal(err)
	}
	wantParts = []TopicPartition{tp("left", 1), tp("left", 3), tp("right", 1)}
	wantTasks = []TaskID{task(5, 1), task(5, 3), task(5, 1)}
	if !reflect.DeepEqual(parts, wantParts) || !reflect.DeepEqual(active, wantTasks) {
		t.Fatalf("got %v %v", parts, active)
	}
	if _, _, err := AlignActiveTasks([]TaskID{task(3, 0)}, topo, counts); err == nil {
		t.Fatal("unknown subtopology accepted")
	}
	// Subtopology 2 reads a missing topic: no partitions, no entries.
	parts, active, err = AlignActiveTasks([]TaskID{task(2, 0)}, topo, counts)
	if err != nil || len(parts) != 0 || len(active) != 0 {
		t.Fatalf("missing topic: %v %v %v", parts, active, err)
	}
}

func TestStandbyAssignment(t *testing.T) {
	topo, counts := testTopology(t)
	got, err := StandbyAssignment([]TaskID{task(5, 1), task(1, 1), task(5, 1)}, topo, counts)
	if err != nil {
		t.Fatal(err)
	}
	want := []StandbyTask{
		{Task: task(1, 1), Partitions: []TopicPartition{tp(rep, 1)}},
		{Task: task(5, 1), Partitions: []TopicPartition{tp("left", 1), tp("right", 1)}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
}

func TestClassifyOwnedTasks(t *testing.T) {
	topo, _ := testTopology(t)
	sub := &SubscriptionInfo{Version: 11, TaskOffsetSums: []TaskOffsetSum{
		{Task: task(1, 0), OffsetSum: OffsetSumRunningActive}, // running stateful active
		{Task: task(0, 0), OffsetSum: 50},                     // restoring active: owned partition wins
		{Task: task(1, 2), OffsetSum: 7},                      // standby or state on disk
		{Task: task(5, 0), OffsetSum: OffsetSumRunningActive}, // active without owned partition (eager)
	}}
	owned := []TopicPartition{tp("input", 0), tp("input", 1), tp("gone", 0)}
	got, err := ClassifyOwnedTasks(sub, owned, topo)
	if err != nil {
		t.Fatal(err)
	}
	want := OwnedTasks{
		Active:            []TaskID{task(0, 0), task(0, 1), task(1, 0), task(5, 0)},
		Standby:           []TaskID{task(1, 2)},
		UnknownPartitions: []TopicPartition{tp("gone", 0)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	// v1-6: prev tasks are active, standby tasks standby.
	old := &SubscriptionInfo{Version: 6, PrevTasks: []TaskID{task(1, 1)}, StandbyTasks: []TaskID{task(0, 2)}}
	got, err = ClassifyOwnedTasks(old, nil, topo)
	if err != nil || !reflect.DeepEqual(got.Active, []TaskID{task(1, 1)}) || !reflect.DeepEqual(got.Standby, []TaskID{task(0, 2)}) {
		t.Fatalf("v6: %+v %v", got, err)
	}
	named := &SubscriptionInfo{Version: 11, TaskOffsetSums: []TaskOffsetSum{{Task: TaskID{NamedTopology: "nt"}, OffsetSum: -2}}}
	if _, err := ClassifyOwnedTasks(named, nil, topo); err == nil {
		t.Fatal("named topology accepted")
	}
}

func TestHostMaps(t *testing.T) {
	a := HostInfo{"a", 1}
	b := HostInfo{"b", 2}
	idle := HostInfo{"idle", 3}
	active, standby := HostMaps([]EndpointPartitions{
		{Endpoint: b, Active: []TopicPartition{tp("x", 1)}},
		{Endpoint: a, Active: []TopicPartition{tp("x", 2), tp("x", 0)}, Standby: []TopicPartition{tp("x", 1)}},
		{Endpoint: a, Active: []TopicPartition{tp("x", 0), tp("y", 0)}}, // same endpoint: merged
	}, []HostInfo{idle, a})
	wantActive := []HostPartitions{
		{HostInfo: a, Partitions: []TopicPartition{tp("x", 0), tp("x", 2), tp("y", 0)}},
		{HostInfo: b, Partitions: []TopicPartition{tp("x", 1)}},
		{HostInfo: idle},
	}
	wantStandby := []HostPartitions{
		{HostInfo: a, Partitions: []TopicPartition{tp("x", 1)}},
		{HostInfo: b},
		{HostInfo: idle},
	}
	if !reflect.DeepEqual(active, wantActive) || !reflect.DeepEqual(standby, wantStandby) {
		t.Fatalf("got\n%v\n%v", active, standby)
	}
}

func TestReplyVersion(t *testing.T) {
	for _, tc := range []struct {
		used, latest int32
		want         VersionReply
	}{
		{11, 11, VersionReply{11, 11, false}},
		{10, 10, VersionReply{10, 10, false}},
		{10, 11, VersionReply{10, 11, false}}, // pinned member: one probing rejoin moves it to 11
		{7, 12, VersionReply{7, 11, false}},   // never above what we speak
		{3, 11, VersionReply{3, 11, false}},
		{2, -1, VersionReply{2, UnknownVersion, false}},
		{1, -1, VersionReply{1, UnknownVersion, false}},
		{12, 12, VersionReply{11, 11, true}},
		{15, 15, VersionReply{11, 11, true}},
	} {
		got := ReplyVersion(tc.used, tc.latest)
		if got != tc.want {
			t.Errorf("ReplyVersion(%d, %d) = %+v, want %+v", tc.used, tc.latest, got, tc.want)
		}
		if !got.Future && (got.Version != tc.used || (tc.latest >= 3 && got.CommonlySupportedVersion > tc.latest)) {
			t.Errorf("ReplyVersion(%d, %d) breaks the rule: %+v", tc.used, tc.latest, got)
		}
	}
	f := FutureMemberAssignment()
	b, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// Research vector V12 layout with nextRebalanceMs MAX.
	if want := mustHex(t, "0000000b 0000000b 00000000 00000000 00000000 00000000 00000000 00000000 7fffffffffffffff"); string(b) != string(want) {
		t.Fatalf("future reply %x", b)
	}
	if _, err := ErrorAssignment(ReplyVersion(3, 11), AssignorErrorShutdownRequested); err == nil {
		t.Error("error assignment at v3 accepted")
	}
	e, err := ErrorAssignment(ReplyVersion(9, 11), AssignorErrorShutdownRequested)
	if err != nil || e.Version != 9 || e.CommonlySupportedVersion != 11 || e.ErrCode != 4 {
		t.Fatalf("error assignment %+v %v", e, err)
	}
}

func TestTaskIDConversions(t *testing.T) {
	for _, s := range []string{"0_0", "12_345", "nt__1_3"} {
		id, err := ParseTaskID(s)
		if err != nil || id.String() != s {
			t.Errorf("%s: %v %v", s, id, err)
		}
	}
	for _, s := range []string{"", "1", "a_1", "1_b", "__1_2"} {
		if _, err := ParseTaskID(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
	m, err := TasksToStreams([]TaskID{task(1, 3), task(0, 2), task(1, 0)})
	if err != nil || !reflect.DeepEqual(m, map[string][]int32{"0": {2}, "1": {0, 3}}) {
		t.Fatalf("to streams %v %v", m, err)
	}
	back, err := TasksFromStreams(m)
	if err != nil || !reflect.DeepEqual(back, []TaskID{task(0, 2), task(1, 0), task(1, 3)}) {
		t.Fatalf("from streams %v %v", back, err)
	}
	if _, err := TasksToStreams([]TaskID{{NamedTopology: "nt"}}); err == nil {
		t.Error("named topology converted")
	}
	if _, err := TaskFromStreams("-0", 1); err == nil {
		t.Error(`"-0" accepted`)
	}
	p, err := ParseProcessID(pid.String())
	if err != nil || p != pid || pid.String() != "11111111-2222-3333-4444-555555555555" {
		t.Fatalf("process id %v %v", p, err)
	}
	for _, in := range []string{"localhost:8080", "[::1]:9", "h:65535"} {
		if _, err := ParseEndpoint(in); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
	if h, _ := ParseEndpoint("[::1]:9"); h != (HostInfo{"::1", 9}) {
		t.Errorf("ipv6 %v", h)
	}
	for _, in := range []string{"localhost", "h:70000", "h:-1"} {
		if _, err := ParseEndpoint(in); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
}

func TestBuildSyncAssignment(t *testing.T) {
	topo, counts := testTopology(t)
	hosts, standbyHosts := HostMaps([]EndpointPartitions{{Endpoint: HostInfo{"localhost", 8080}, Active: []TopicPartition{tp(rep, 0), tp("input", 0), tp("input", 1)}}}, nil)
	in := SyncAssignment{
		ConsumerProtocolVersion: 3, SubscriptionVersion: 11, LatestSupportedVersion: 11,
		Active: []TaskID{task(0, 1), task(1, 0), task(0, 0)}, Standby: []TaskID{task(1, 1)},
		PartitionsByHost: hosts, StandbyPartitionsByHost: standbyHosts, NextRebalanceMs: NoFollowupRebalance,
	}
	b, ca, info, err := BuildSyncAssignment(in, topo, counts)
	if err != nil {
		t.Fatal(err)
	}
	// What the client reads back: partitions and the aligned list.
	got, err := DecodeConsumerAssignment(b)
	if err != nil {
		t.Fatal(err)
	}
	gotInfo, err := DecodeAssignmentInfo(got.UserData)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.AssignedPartitions, []TopicPartition{tp(rep, 0), tp("input", 0), tp("input", 1)}) ||
		!reflect.DeepEqual(gotInfo.ActiveTasks, []TaskID{task(1, 0), task(0, 0), task(0, 1)}) ||
		gotInfo.Version != 11 || gotInfo.CommonlySupportedVersion != 11 || len(gotInfo.StandbyTasks) != 1 ||
		got.Version != 3 || ca.Version != 3 || info.Version != 11 {
		t.Fatalf("got %+v %+v", got, gotInfo)
	}
	// A member from the future: nothing, at v11.
	in.SubscriptionVersion, in.LatestSupportedVersion, in.ConsumerProtocolVersion = 12, 12, 5
	_, ca, info, err = BuildSyncAssignment(in, topo, counts)
	if err != nil || len(ca.AssignedPartitions) != 0 || ca.Version != 3 || info.Version != 11 || len(info.ActiveTasks) != 0 {
		t.Fatalf("future: %+v %+v %v", ca, info, err)
	}
	// Shutdown at v9; not expressible at v3.
	in.SubscriptionVersion, in.LatestSupportedVersion, in.ErrCode = 9, 11, AssignorErrorShutdownRequested
	_, ca, info, err = BuildSyncAssignment(in, topo, counts)
	if err != nil || len(ca.AssignedPartitions) != 0 || info.ErrCode != 4 || info.Version != 9 {
		t.Fatalf("shutdown: %+v %+v %v", ca, info, err)
	}
	in.SubscriptionVersion = 3
	if _, _, _, err := BuildSyncAssignment(in, topo, counts); err == nil {
		t.Fatal("error assignment at v3 built")
	}
}
