package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/streamshift/streamshift/cluster"
	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/e2e/harness"
	"github.com/streamshift/streamshift/upstream"
)

// clusterPartitions is the log's partition count in these tests.
const clusterPartitions = 6

// testInstance is one `streamshift run` (serve) of a cluster in this
// process, listening on its own loopback address.
type testInstance struct {
	id, host  string
	bootstrap string
	admin     string
	cancel    context.CancelFunc
	done      chan int
	cl        *kgo.Client
}

func startInstance(t *testing.T, seeds []string, id, host string, port int, extraEnv ...string) *testInstance {
	t.Helper()
	return startInstanceWith(t, seeds, id, host, port, serveTweak{}, extraEnv...)
}

// startInstanceWith is startInstance with serve's tweak tw (the cluster's
// test hooks).
func startInstanceWith(t *testing.T, seeds []string, id, host string, port int, tw serveTweak, extraEnv ...string) *testInstance {
	t.Helper()
	in := &testInstance{id: id, host: host, bootstrap: net.JoinHostPort(host, strconv.Itoa(port)),
		admin: net.JoinHostPort(host, strconv.Itoa(port+3)), done: make(chan int, 1)}
	args := []string{"--upstream", seeds[0], "--listen", in.bootstrap, "--node-id-min", "0", "--node-id-max", "1",
		"--admin-listen", in.admin, "--proxy-id", id}
	env := []string{
		"STREAMSHIFT_COORDINATOR_LOG_PARTITIONS=" + strconv.Itoa(clusterPartitions),
		"STREAMSHIFT_COORDINATOR_INSTANCE_SESSION_TIMEOUT=6s",
		"STREAMSHIFT_STREAMS_INITIAL_REBALANCE_DELAY_MS=0",
		"STREAMSHIFT_CLUSTER_LISTEN=" + in.internal(port),
	}
	env = append(env, extraEnv...)
	cfg, _, err := config.Load(args, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(os.Stderr).Level(zerolog.WarnLevel).With().Str("instance", id).Timestamp().Logger()
	ctx, cancel := context.WithCancel(context.Background())
	in.cancel = cancel
	ready := make(chan struct{})
	go func() { in.done <- serve(ctx, cfg, log, func(context.Context, string) { close(ready) }, tw) }()
	select {
	case <-ready:
	case code := <-in.done:
		t.Fatalf("instance %s exited with %d", id, code)
	case <-time.After(60 * time.Second):
		t.Fatalf("instance %s not ready", id)
	}
	// The members here stand for Java clients (Kafka Streams), which
	// connect to the coordinator by the host FindCoordinator names.
	in.cl, err = kgo.NewClient(kgo.SeedBrokers(in.bootstrap), kgo.SoftwareNameAndVersion("apache-kafka-java", "4.4.0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.stop)
	return in
}

// stop stops the instance gracefully (it hands its partitions over) and
// returns its exit code.
func (in *testInstance) stop() {
	if in.cancel == nil {
		return
	}
	in.cl.Close()
	in.cancel()
	in.cancel = nil
	select {
	case code := <-in.done:
		if code != 0 {
			panic(fmt.Sprintf("instance %s exited with %d", in.id, code))
		}
	case <-time.After(60 * time.Second):
		panic("instance " + in.id + " did not stop")
	}
}

// internal is the instance's internal listener: port+4 on its host.
func (in *testInstance) internal(port int) string {
	return net.JoinHostPort(in.host, strconv.Itoa(port+4))
}

// waitLinks waits until every instance has a link up to each of the
// others, dialled at the internal address the map publishes for it, and
// none to an instance that left.
func waitLinks(t *testing.T, ctx context.Context, port int, ins ...*testInstance) {
	t.Helper()
	for {
		ok := true
		for _, in := range ins {
			v := in.view(t)
			if v.Self.Internal != in.internal(port) || len(v.Links) != len(ins)-1 {
				ok = false
				break
			}
			for _, other := range ins {
				if other != in && (!v.Links[other.id].Up || v.Instances[other.id].Internal != other.internal(port)) {
					ok = false
				}
			}
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			for _, in := range ins {
				t.Logf("%s: links %v, self %+v", in.id, in.view(t).Links, in.view(t).Self)
			}
			t.Fatal("the instances' links did not come up")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (in *testInstance) view(t *testing.T) cluster.View {
	t.Helper()
	resp, err := http.Get("http://" + in.admin + "/cluster")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v cluster.View
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// ui is the instance's status page, /ui?query.
func (in *testInstance) ui(t *testing.T, query string) string {
	t.Helper()
	resp, err := http.Get("http://" + in.admin + "/ui?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/ui at %s: %d %v", in.id, resp.StatusCode, err)
	}
	return string(b)
}

// checkUI fails unless instance in's status page, asked which instance
// serves group, shows the instances ins (this one marked), the owner map
// and owner as the group's.
//
// The page's groups are a read shared for a second (status/shared_read.go):
// what just changed shows within it, so the page is read until it does
// (its deadline only turns a page that never shows it into a failure).
func checkUI(t *testing.T, in *testInstance, group string, owner *testInstance, ins []*testInstance, owners []string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		page := in.ui(t, "group="+group)
		if missing := uiLacks(page, in, group, owner, ins, owners); len(missing) == 0 || time.Now().After(deadline) {
			for _, m := range missing {
				t.Errorf("/ui at %s %s", in.id, m)
			}
			return
		}
	}
}

// uiLacks is what the page of in lacks of what checkUI wants.
func uiLacks(page string, in *testInstance, group string, owner *testInstance, ins []*testInstance, owners []string) []string {
	var missing []string
	p := coordinator.PartitionFor(group, clusterPartitions)
	wants := []string{`id="cluster" data-self="` + in.id + `"`, in.id + " (this instance)",
		fmt.Sprintf(`class="found" data-group="%s" data-partition="%d" data-owner="%s"`, group, p, owner.id)}
	for _, o := range ins {
		wants = append(wants, fmt.Sprintf(`data-instance="%s" data-host="%s" data-state="alive"`, o.id, o.host))
	}
	for q, o := range owners {
		wants = append(wants, fmt.Sprintf(`data-partition="%d" data-owner="%s"`, q, o))
	}
	if in == owner {
		wants = append(wants, `data-group="`+group+`" data-served="true"`, `class="owner" data-owner="`+owner.id+`"`)
	}
	for _, w := range wants {
		if !strings.Contains(page, w) {
			missing = append(missing, "lacks "+w)
		}
	}
	if n := strings.Count(page, `<tr class="instance`); n != len(ins) {
		missing = append(missing, fmt.Sprintf("lists %d instances, want %d", n, len(ins)))
	}
	return missing
}

// settle waits until every instance shows the same complete owner map, of
// exactly these instances, and serves (loaded) what it owns.
func settle(t *testing.T, ctx context.Context, ins ...*testInstance) []string {
	t.Helper()
	for {
		var owners []string
		ok := true
		for _, in := range ins {
			v := in.view(t)
			if len(v.Instances) != len(ins) || len(v.Owners) != clusterPartitions || (owners != nil && !reflect.DeepEqual(owners, v.Owners)) {
				ok = false
				break
			}
			owners = v.Owners
			loaded := map[int32]bool{}
			for _, s := range v.Partitions {
				loaded[s.Partition] = s.State == "loaded"
			}
			for p, o := range v.Owners {
				if o == "" || (o == in.id) != loaded[int32(p)] {
					ok = false
				}
			}
		}
		if ok {
			return owners
		}
		select {
		case <-ctx.Done():
			for _, in := range ins {
				t.Logf("%s: %+v", in.id, in.view(t))
			}
			t.Fatal("the cluster did not settle")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func byID(ins []*testInstance, id string) *testInstance {
	for _, in := range ins {
		if in.id == id {
			return in
		}
	}
	return nil
}

// node0 is the instance's connection for upstream node 0 (kfake's broker).
func (in *testInstance) node0() *kgo.Broker { return in.cl.Broker(0) }

func findCoordinator(t *testing.T, ctx context.Context, in *testInstance, group string) kmsg.FindCoordinatorResponseCoordinator {
	t.Helper()
	return findCoordinatorWith(t, ctx, in.cl, group)
}

func findCoordinatorWith(t *testing.T, ctx context.Context, cl *kgo.Client, group string) kmsg.FindCoordinatorResponseCoordinator {
	t.Helper()
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorKeys = group, []string{group}
	resp, err := fc.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Coordinators) != 1 {
		t.Fatalf("FindCoordinator: %+v", resp)
	}
	return resp.Coordinators[0]
}

// streamsJoin is a member's first heartbeat: one subtopology reading topic.
func streamsJoin(group, member, topic string) *kmsg.StreamsGroupHeartbeatRequest {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID = group, member
	req.EndpointInformationEpoch, req.RebalanceTimeoutMillis = -1, 30000
	req.ProcessID = kmsg.StringPtr("process-" + member)
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{topic}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	return req
}

// streamsHeartbeat is a member's heartbeat at epoch, owning owned.
func streamsHeartbeat(group, member string, epoch int32, owned []kmsg.TaskIDs) *kmsg.StreamsGroupHeartbeatRequest {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = group, member, epoch
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = owned, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	return req
}

// member is a hand-written streams-protocol member.
type member struct {
	id    string
	epoch int32
	owned []kmsg.TaskIDs
}

// heartbeat sends the member's heartbeat to in and takes its answer.
func (m *member) heartbeat(ctx context.Context, in *testInstance, req *kmsg.StreamsGroupHeartbeatRequest) (*kmsg.StreamsGroupHeartbeatResponse, error) {
	resp, err := req.RequestWith(ctx, in.node0())
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return resp, err
	}
	m.epoch = resp.MemberEpoch
	if resp.ActiveTasks != nil {
		m.owned = resp.ActiveTasks
	}
	return resp, nil
}

// joinUntilAssigned joins m to group at in and heartbeats until it owns
// tasks and the group is stable for it.
// commitRequest is the member's OffsetCommit of group: offsets[p] for
// partition p of topic, at its member epoch.
func (m *member) commitRequest(group, topic string, offsets ...int64) *kmsg.OffsetCommitRequest {
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.MemberID, commit.Generation = group, m.id, m.epoch
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = topic
	for p, o := range offsets {
		cp := kmsg.NewOffsetCommitRequestTopicPartition()
		cp.Partition, cp.Offset = int32(p), o
		ct.Partitions = append(ct.Partitions, cp)
	}
	commit.Topics = append(commit.Topics, ct)
	return commit
}

func (m *member) joinUntilAssigned(t *testing.T, ctx context.Context, in *testInstance, group, topic string) {
	t.Helper()
	req := streamsJoin(group, m.id, topic)
	for {
		resp, err := m.heartbeat(ctx, in, req)
		if err != nil {
			t.Fatalf("member %s at %s: %v", m.id, in.id, err)
		}
		if len(m.owned) > 0 && len(resp.Status) == 0 && resp.ActiveTasks == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("member %s never settled: %+v", m.id, resp)
		}
		time.Sleep(50 * time.Millisecond)
		req = streamsHeartbeat(group, m.id, m.epoch, m.owned)
	}
}

func describeStreams(t *testing.T, ctx context.Context, in *testInstance, group string) kmsg.StreamsGroupDescribeResponseGroup {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{group}
	resp, err := req.RequestWith(ctx, in.node0())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Groups[0]
}

// TestClusterOwnershipMovesAndFencing runs three instances in front of one
// kfake cluster: they share the log's partitions evenly and agree on the
// owner map; every instance answers FindCoordinator as a single instance
// (the node at its own port, for every client: the requests hop); a
// non-owner sends the group's requests to the owner; a graceful stop of the owner hands the
// group over, and the next owner serves it exactly as it was (the member
// heartbeats on at the same epoch); a writer fenced by a newer one (a
// zombie) refuses its next write NOT_COORDINATOR and serves the group no
// more.
func TestClusterOwnershipMovesAndFencing(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(kversion.V3_9_0()), kfake.SeedTopics(4, "in"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close) // after the instances stopped
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	seeds := cluster.ListenAddrs()
	hosts := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}
	// Node ports +1 and +2 (nodes 0 and 1: the proxy reads a range of 0..0
	// as unset), the admin port +3, the internal listener +4.
	port, err := harness.FreePortsOnHosts(hosts, 5)
	if err != nil {
		t.Fatal(err)
	}
	ins := []*testInstance{
		startInstance(t, seeds, "a", hosts[0], port),
		startInstance(t, seeds, "b", hosts[1], port),
		startInstance(t, seeds, "c", hosts[2], port),
	}
	owners := settle(t, ctx, ins...)
	count := map[string]int{}
	for _, o := range owners {
		count[o]++
	}
	if count["a"] != 2 || count["b"] != 2 || count["c"] != 2 {
		t.Fatalf("partitions spread %v, want 2 each", count)
	}
	waitLinks(t, ctx, port, ins...)

	const group = "app"
	p := coordinator.PartitionFor(group, clusterPartitions)
	owner := byID(ins, owners[p])
	var other *testInstance
	for _, in := range ins {
		if in != owner {
			other = in
			break
		}
	}
	// Every instance hops the group's requests to the owner: each answers
	// FindCoordinator as a single instance would (the broker's
	// coordinator node at its own port for it), for every client.
	for _, in := range ins {
		c := findCoordinator(t, ctx, in, group)
		if c.ErrorCode != 0 || c.Host != in.host || c.Port != int32(port+1) || c.NodeID != 0 {
			t.Fatalf("FindCoordinator(%s) at %s: %+v, want %s:%d node 0", group, in.id, c, in.host, port+1)
		}
	}
	franz, err := kgo.NewClient(kgo.SeedBrokers(other.bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer franz.Close()
	if c := findCoordinatorWith(t, ctx, franz, group); c.ErrorCode != 0 || c.Host != other.host || c.NodeID != 0 {
		t.Fatalf("FindCoordinator(%s) of a franz-go client at %s: %+v, want %s node 0", group, other.id, c, other.host)
	}
	// A non-owner sends the group's requests to the owner (a serve call)
	// and answers with the owner's answer.
	m := &member{id: "m1"}
	m.joinUntilAssigned(t, ctx, other, group, "in")
	before := describeStreams(t, ctx, owner, group)
	if before.ErrorCode != 0 || len(before.Members) != 1 {
		t.Fatalf("describe at the owner: %+v", before)
	}
	if g := describeStreams(t, ctx, other, group); !reflect.DeepEqual(g, before) {
		t.Fatalf("describe at the non-owner:\n%+v\nwant the owner's\n%+v", g, before)
	}
	// The status page of every instance says who serves the group.
	for _, in := range ins {
		checkUI(t, in, group, owner, ins, owners)
	}

	// The owner stops gracefully: the group moves, loaded exactly.
	owner.stop()
	var rest []*testInstance
	for _, in := range ins {
		if in != owner {
			rest = append(rest, in)
		}
	}
	owners = settle(t, ctx, rest...)
	waitLinks(t, ctx, port, rest...)
	next := byID(rest, owners[p])
	for _, in := range rest {
		checkUI(t, in, group, next, rest, owners)
	}
	after := describeStreams(t, ctx, next, group)
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("group after the move:\n%+v\nwant\n%+v", after, before)
	}
	epoch := m.epoch
	if _, err := m.heartbeat(ctx, next, streamsHeartbeat(group, m.id, m.epoch, m.owned)); err != nil || m.epoch != epoch {
		t.Fatalf("heartbeat at the next owner: %v, epoch %d, want %d", err, m.epoch, epoch)
	}

	// A newer writer of the partition fences the owner: its next write
	// (a new member's join) is refused, and it serves the group no more.
	newer, err := upstream.OpenSharedGroupLog(ctx, upstream.GroupLogOptions{Seeds: seeds, Partitions: clusterPartitions})
	if err != nil {
		t.Fatal(err)
	}
	defer newer.Close()
	if _, err := newer.Acquire(ctx, p); err != nil {
		t.Fatal(err)
	}
	m2 := &member{id: "m2"}
	if _, err := m2.heartbeat(ctx, next, streamsJoin(group, m2.id, "in")); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("join at the fenced owner: %v, want NOT_COORDINATOR", err)
	}
	for {
		_, err := m.heartbeat(ctx, next, streamsHeartbeat(group, m.id, m.epoch, m.owned))
		if errors.Is(err, kerr.NotCoordinator) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the fenced owner still serves: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
