package status

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator"
)

// kgoUpstream is Upstream over a kgo client, as cmd/streamshift's is.
type kgoUpstream struct{ cl *kgo.Client }

func (u kgoUpstream) DescribeClassic(ctx context.Context, ids []string) ([]kmsg.DescribeGroupsResponseGroup, error) {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = ids
	resp, err := req.RequestWith(ctx, u.cl)
	if err != nil {
		return nil, err
	}
	return resp.Groups, nil
}

func (u kgoUpstream) Committed(ctx context.Context, group string) (map[string]map[int32]int64, error) {
	fetched, err := kadm.NewClient(u.cl).FetchOffsets(ctx, group)
	if err != nil {
		return nil, err
	}
	out := map[string]map[int32]int64{}
	fetched.Each(func(o kadm.OffsetResponse) {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		out[o.Topic][o.Partition] = o.At
	})
	return out, nil
}

func kgoEndOffsets(cl *kgo.Client) EndOffsets {
	return func(ctx context.Context, topics []string) (map[string]map[int32]int64, error) {
		listed, err := kadm.NewClient(cl).ListEndOffsets(ctx, topics...)
		if err != nil {
			return nil, err
		}
		out := map[string]map[int32]int64{}
		listed.Each(func(o kadm.ListedOffset) {
			if out[o.Topic] == nil {
				out[o.Topic] = map[int32]int64{}
			}
			out[o.Topic][o.Partition] = o.Offset
		})
		return out, nil
	}
}

// classicStreamsGroup makes group a classic Kafka Streams group on the
// fake cluster: one member of process processID (client id as Kafka
// Streams names it) joined with protocol "stream", assigned input-0 and
// input-1 (tasks 0_0 and 0_1) and standby task 1_0; it returns the member id.
func classicStreamsGroup(ctx context.Context, t *testing.T, cl *kgo.Client, group string, processID classicstreams.ProcessID) string {
	t.Helper()
	info := classicstreams.SubscriptionInfo{Version: 11, LatestSupportedVersion: 11, ProcessID: processID}
	userData, err := info.Encode()
	if err != nil {
		t.Fatal(err)
	}
	sub := classicstreams.ConsumerSubscription{Version: 3, Topics: []string{"input"}, UserData: userData, GenerationID: -1}
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis, join.ProtocolType = group, 45000, 60000, classicstreams.ProtocolType
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: classicstreams.StreamsProtocolName, Metadata: sub.Encode()}}
	var jr *kmsg.JoinGroupResponse
	for {
		jr, err = join.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if jr.ErrorCode != 15 && jr.ErrorCode != 14 { // coordinator not available, loading
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if jr.ErrorCode == 79 { // MEMBER_ID_REQUIRED: join again with it
		join.MemberID = jr.MemberID
		if jr, err = join.RequestWith(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	if jr.ErrorCode != 0 {
		t.Fatalf("join: error %d", jr.ErrorCode)
	}
	ai := classicstreams.AssignmentInfo{Version: 10, CommonlySupportedVersion: 10,
		ActiveTasks:  []classicstreams.TaskID{{Subtopology: 0, Partition: 0}, {Subtopology: 0, Partition: 1}},
		StandbyTasks: []classicstreams.StandbyTask{{Task: classicstreams.TaskID{Subtopology: 1, Partition: 0}}}}
	aiBytes, err := ai.Encode()
	if err != nil {
		t.Fatal(err)
	}
	assignment := classicstreams.ConsumerAssignment{Version: 3, AssignedPartitions: []classicstreams.TopicPartition{{Topic: "input", Partition: 0}, {Topic: "input", Partition: 1}}, UserData: aiBytes}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.Generation, sync.MemberID = group, jr.Generation, jr.MemberID
	sync.ProtocolType, sync.Protocol = kmsg.StringPtr(classicstreams.ProtocolType), kmsg.StringPtr(classicstreams.StreamsProtocolName)
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: jr.MemberID, MemberAssignment: assignment.Encode()}}
	sr, err := sync.RequestWith(ctx, cl)
	if err != nil || sr.ErrorCode != 0 {
		t.Fatalf("sync: %v %+v", err, sr)
	}
	return jr.MemberID
}

// TestObservedClassicGroupListed: a classic Kafka Streams group whose
// members streamshift observes (the migration on, the group classic on the
// broker) is on the page and in the JSON from its first classic join,
// marked "observed, classic on the broker", with its member (labelled
// host/processUUID[:8] thread N), the tasks decoded from its classic
// assignment, and its active tasks' lag measured: the input partitions'
// end offsets minus the group's committed offsets. A classic group that is
// not a Kafka Streams group is not listed.
func TestObservedClassicGroupListed(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "input"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ClientID("app-6ba7b810-9dad-11d1-80b4-00c04fd430c8-StreamThread-2-consumer"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	for p, n := range map[int32]int{0: 10, 1: 4} {
		for range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "input", Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	pid, err := classicstreams.ParseProcessID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	if err != nil {
		t.Fatal(err)
	}
	member := classicStreamsGroup(ctx, t, cl, "app", pid)
	topics, err := kadm.NewClient(cl).ListTopics(ctx, "input")
	if err != nil {
		t.Fatal(err)
	}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation, commit.MemberID = "app", 1, member
	commit.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "input", TopicID: topics["input"].ID, Partitions: []kmsg.OffsetCommitRequestTopicPartition{
		{Partition: 0, Offset: 7, LeaderEpoch: -1}, {Partition: 1, Offset: 4, LeaderEpoch: -1}}}}
	if cr, err := commit.RequestWith(ctx, cl); err != nil || cr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("commit: %v %+v", err, cr)
	}
	// A plain consumer group, observed too: not a Kafka Streams group.
	plain := kmsg.NewPtrJoinGroupRequest()
	plain.Group, plain.SessionTimeoutMillis, plain.RebalanceTimeoutMillis, plain.ProtocolType, plain.MemberID = "plain", 45000, 60000, "consumer", "p"
	plain.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: (&classicstreams.ConsumerSubscription{Topics: []string{"input"}}).Encode()}}
	if _, err := plain.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}

	ev := NewEvents(nil)
	c := newCoordinator(t, ev)
	// What the forwarding path tells the coordinator of each group's classic
	// members (migration.ClassicObserver).
	c.ObserveClassic("app", coordinator.ClassicObservation{Member: member, Generation: 1, HaveGeneration: true, At: time.Now()})
	c.ObserveClassic("plain", coordinator.ClassicObservation{Member: "p", Generation: 1, HaveGeneration: true, At: time.Now()})
	h := New(Options{Coordinator: c, Events: ev, EndOffsets: kgoEndOffsets(cl), Upstream: kgoUpstream{cl}}).Handler()

	code, body := get(t, h, "/api/groups")
	var all struct{ Groups []Group }
	if err := json.Unmarshal([]byte(body), &all); code != http.StatusOK || err != nil || len(all.Groups) != 1 {
		t.Fatalf("/api/groups: %d %v %s", code, err, body)
	}
	g := all.Groups[0]
	if g.ID != "app" || g.Served || g.Observed != observedNote || g.State != "Stable" || len(g.Members) != 1 {
		t.Fatalf("group %+v", g)
	}
	m := g.Members[0]
	if m.MemberID != member || m.Protocol != "classic" || m.Label != "127.0.0.1/6ba7b810 thread 2" || m.ProcessID != pid.String() ||
		strings.Join(m.Active, " ") != "0_0 0_1" || strings.Join(m.Standby, " ") != "1_0" {
		t.Fatalf("member %+v", m)
	}
	want := map[string]string{"0_0": "3 measured", "0_1": "0 measured", "1_0": whyClassicChangelog}
	for _, tl := range m.Tasks {
		got := tl.Why
		if tl.Lag != nil {
			got = fmt.Sprintf("%d %s", *tl.Lag, tl.Source)
		}
		if got != want[tl.Task] {
			t.Errorf("task %s: %q, want %q", tl.Task, got, want[tl.Task])
		}
	}
	if m.Lag == nil || *m.Lag != 3 || m.LagSource != sourceMeasured {
		t.Fatalf("member lag %v (%s), want 3 measured", deref(m.Lag), m.LagSource)
	}
	if code, _ := get(t, h, "/api/groups/app"); code != http.StatusOK {
		t.Fatalf("/api/groups/app: %d", code)
	}
	_, page := get(t, h, "/ui")
	for _, want := range []string{`data-group="app" data-served="false" data-observed="observed, classic on the broker"`, "127.0.0.1/6ba7b810 thread 2",
		`data-member="` + member + `" data-protocol="classic"`, `data-task="0_0" data-lag="3" data-source="measured"`, `data-source="measured">measured now`} {
		if !strings.Contains(page, want) {
			t.Errorf("/ui lacks %s\n%s", want, page)
		}
	}
}

// TestObservedGroupKeptThroughARebalance: the broker names a classic
// group's protocol only while it is Stable; a group seen as a Kafka Streams
// group stays listed while it rebalances (protocol ""), one never seen so
// is not, and a group no longer observed is forgotten.
func TestObservedGroupKeptThroughARebalance(t *testing.T) {
	var k kafkaStreamsGroups
	g := func(id, protocol, state string) kmsg.DescribeGroupsResponseGroup {
		d := kmsg.NewDescribeGroupsResponseGroup()
		d.Group, d.ProtocolType, d.Protocol, d.State = id, "consumer", protocol, state
		return d
	}
	for i, c := range []struct {
		d    kmsg.DescribeGroupsResponseGroup
		keep []string
		want bool
	}{
		{g("app", "", "PreparingRebalance"), nil, false},
		{g("app", "stream", "Stable"), nil, true},
		{g("app", "", "PreparingRebalance"), nil, true},
		{g("app", "", "CompletingRebalance"), []string{"app"}, true},
		{g("app", "", "Dead"), nil, false},
		{g("plain", "range", "Stable"), nil, false},
		{g("app", "", "PreparingRebalance"), []string{"other"}, false},
	} {
		if c.keep != nil {
			k.keep(c.keep)
		}
		if got := k.is(c.d); got != c.want {
			t.Errorf("%d: %s %q %s: %v, want %v", i, c.d.Group, c.d.Protocol, c.d.State, got, c.want)
		}
	}
}

// TestObservedMemberRebalancing: while the broker's group rebalances it
// describes no assignment; the member is listed without tasks, and says so.
func TestObservedMemberRebalancing(t *testing.T) {
	m := kmsg.NewDescribeGroupsResponseGroupMember()
	m.MemberID, m.ClientID, m.ClientHost = "m", "app-6ba7b810-9dad-11d1-80b4-00c04fd430c8-StreamThread-1-consumer", "/10.0.0.7"
	mm := decodeObserved(m).member(measureInputs{})
	if mm.Label != "10.0.0.7/6ba7b810 thread 1" || len(mm.Tasks) != 0 || mm.Lag != nil || mm.LagWhy != whyRebalancing {
		t.Fatalf("member %+v", mm)
	}
}
