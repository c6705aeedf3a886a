package migration

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
	clock := coordinator.NewManualClock(time.Unix(0, 0))
	c := coordinatorOn(t, clock)
	o := NewClassicObserver(c)
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
	if r := takeOver(c, st); r.ErrorCode != 0 || len(r.ActiveTasks) != 0 {
		t.Fatalf("takeover: %d tasks %v", r.ErrorCode, r.ActiveTasks)
	}
	if err := classicCommit(c, "a"); err != nil {
		t.Fatalf("commit at generation 7 after the takeover: %v", err)
	}
}

// The observer's last-heartbeat times carry the members' session clocks
// over the takeover: "b" stopped 9 s into its 10 s session and is fenced
// 1 s after the takeover, "a", whose request was held by the takeover's
// gate at 8 s, lives on its own session; "c", silent for 11 s, is not
// carried over at all (its tasks are free at once).
func TestTakeoverCarriesSessionClocks(t *testing.T) {
	d := &kmsg.DescribeGroupsResponseGroup{Group: "legacy", State: "Stable", ProtocolType: "consumer", Protocol: "stream",
		Members: []kmsg.DescribeGroupsResponseGroupMember{describedMember(t, "a", 0, 1), describedMember(t, "b", 2, 3), describedMember(t, "c", 4, 5)}}
	clock := coordinator.NewManualClock(time.Unix(1000, 0))
	c := coordinatorOn(t, clock)
	o := NewClassicObserver(c)
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 9, "legacy", 10000, 60000
	for _, id := range []string{"a", "b", "c"} {
		jr := kmsg.NewPtrJoinGroupResponse()
		jr.MemberID, jr.Generation = id, 7
		o.ObserveJoin(join, jr)
	}
	clock.Advance(2 * time.Second)
	o.ObserveGeneration("legacy", "b", 7) // b's last heartbeat: 2 s
	clock.Advance(6 * time.Second)
	o.ObserveAlive("legacy", "a") // a's heartbeat held by the gate: 8 s
	o.ObserveAlive("legacy", "nobody")
	clock.Advance(3 * time.Second) // the takeover: 11 s
	st, err := ClassicGroupStateOf(d, o)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1000, 0)
	for i, want := range []time.Duration{8 * time.Second, 2 * time.Second, 0} {
		if got := st.Members[i].LastHeartbeat.Sub(start); got != want {
			t.Fatalf("member %s last heartbeat at %v, want %v", st.Members[i].MemberID, got, want)
		}
	}

	if r := takeOver(c, st); r.ErrorCode != 0 {
		t.Fatalf("takeover: %d %s", r.ErrorCode, *r.ErrorMessage)
	}
	member := func(id string) bool { return classicCommit(c, id) == nil }
	if !member("a") || !member("b") || member("c") {
		t.Fatalf("members after the takeover: a %v b %v c %v; want a and b", member("a"), member("b"), member("c"))
	}
	clock.Advance(1500 * time.Millisecond)
	if !member("a") || member("b") {
		t.Fatalf("1.5 s after the takeover: a %v b %v; want b fenced at its last heartbeat + 10 s", member("a"), member("b"))
	}
}
