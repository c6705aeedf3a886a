package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/streamshift/streamshift/cluster"
	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/e2e/harness"
	"github.com/streamshift/streamshift/proxy/peer"
	"github.com/streamshift/streamshift/upstream"
)

// twoInstances starts instances a and b in front of one kfake cluster
// (topic "in", 4 partitions) and waits until they share the log and their
// links are up.
func twoInstances(t *testing.T, ctx context.Context, env ...string) (ins []*testInstance, owners []string, seeds []string) {
	t.Helper()
	return twoInstancesWith(t, ctx, func(string) serveTweak { return serveTweak{} }, env...)
}

// twoInstancesWith is twoInstances with serve's tweak tw(id) for each
// instance (the cluster's test hooks).
func twoInstancesWith(t *testing.T, ctx context.Context, tw func(id string) serveTweak, env ...string) (ins []*testInstance, owners []string, seeds []string) {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(kversion.V3_9_0()), kfake.SeedTopics(4, "in"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close) // after the instances stopped
	seeds = cluster.ListenAddrs()
	hosts := []string{"127.0.0.1", "127.0.0.2"}
	port, err := harness.FreePortsOnHosts(hosts, 5)
	if err != nil {
		t.Fatal(err)
	}
	ins = []*testInstance{
		startInstanceWith(t, seeds, "a", hosts[0], port, tw("a"), env...),
		startInstanceWith(t, seeds, "b", hosts[1], port, tw("b"), env...),
	}
	owners = settle(t, ctx, ins...)
	waitLinks(t, ctx, port, ins...)
	return ins, owners, seeds
}

// serveCheckTweak gives each instance the cluster's ServeCheck hook: it
// asks (*hook)(id, partition) once a test set hook, and admits every call
// before.
func serveCheckTweak(hook *atomic.Pointer[func(id string, partition int32) bool]) func(id string) serveTweak {
	return func(id string) serveTweak {
		return serveTweak{cluster: func(o *cluster.Options) {
			o.ServeCheck = func(partition int32) bool {
				h := hook.Load()
				return h == nil || (*h)(id, partition)
			}
		}}
	}
}

// groupOwnedBy is a group name with prefix whose log partition owner owns.
func groupOwnedBy(owners []string, owner, prefix string) string {
	for i := 0; ; i++ {
		g := fmt.Sprintf("%s-%d", prefix, i)
		if owners[coordinator.PartitionFor(g, clusterPartitions)] == owner {
			return g
		}
	}
}

// TestClusterForwardToOwner: every request of one group reaching the
// instance that does not own it is served by the owner, for every client:
// a streams member (kmsg) joins, heartbeats and is described through the
// non-owner; a Java client's OffsetCommit and OffsetFetch of that group
// through the non-owner reach the owner (which commits to the group's
// anchor); a franz-go consumer group with the migration on consumes and
// commits through the non-owner.
func TestClusterForwardToOwner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	ins, owners, _ := twoInstances(t, ctx, "STREAMSHIFT_MIGRATION_POLICY=upgrade")
	owner, other := ins[0], ins[1]
	group := groupOwnedBy(owners, owner.id, "app")

	m := &member{id: "m1"}
	m.joinUntilAssigned(t, ctx, other, group, "in")
	at := describeStreams(t, ctx, owner, group)
	if at.ErrorCode != 0 || len(at.Members) != 1 || at.Members[0].MemberID != m.id {
		t.Fatalf("describe at the owner: %+v", at)
	}
	if g := describeStreams(t, ctx, other, group); !reflect.DeepEqual(g, at) {
		t.Fatalf("describe through the non-owner:\n%+v\nwant the owner's\n%+v", g, at)
	}

	// The member commits through the non-owner, as a Java client.
	commit := m.commitRequest(group, "in", 10, 11, 12, 13)
	cresp, err := commit.RequestWith(ctx, other.node0())
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range cresp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				t.Fatalf("commit through the non-owner: %s[%d]: %v", rt.Topic, rp.Partition, kerr.ErrorForCode(rp.ErrorCode))
			}
		}
	}
	for _, in := range ins {
		got, err := fetchOffsets(ctx, in.node0(), group)
		if err != nil {
			t.Fatalf("offsets at %s: %v", in.id, err)
		}
		want := map[int32]int64{0: 10, 1: 11, 2: 12, 3: 13}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("offsets of %s at %s: %v, want %v", group, in.id, got, want)
		}
	}

	// A franz-go consumer group (not host-routed) through the non-owner,
	// with the migration on: its classic requests go to the owner.
	cgroup := groupOwnedBy(owners, owner.id, "consumers")
	prod, err := kgo.NewClient(kgo.SeedBrokers(other.bootstrap), kgo.DefaultProduceTopic("in"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 8 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte{byte(i)}, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(other.bootstrap), kgo.ConsumerGroup(cgroup), kgo.ConsumeTopics("in"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	for got := 0; got < 8; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := fetchOffsets(ctx, owner.node0(), cgroup)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, o := range got {
		total += o
	}
	if total != 8 {
		t.Fatalf("the consumer group's offsets at the owner: %v (sum %d), want 8 records committed", got, total)
	}
}

// fetchOffsets is the group's committed offsets of topic "in" (OffsetFetch
// at the version the broker connection negotiates, one group).
func fetchOffsets(ctx context.Context, b *kgo.Broker, group string) (map[int32]int64, error) {
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Group = group
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic, ft.Partitions = "in", []int32{0, 1, 2, 3}
	fetch.Topics = append(fetch.Topics, ft)
	fg := kmsg.NewOffsetFetchRequestGroup()
	fg.Group = group
	gt := kmsg.NewOffsetFetchRequestGroupTopic()
	gt.Topic, gt.Partitions = "in", []int32{0, 1, 2, 3}
	fg.Topics = append(fg.Topics, gt)
	fetch.Groups = append(fetch.Groups, fg)
	resp, err := fetch.RequestWith(ctx, b)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	if resp.Version >= 8 {
		if len(resp.Groups) != 1 {
			return nil, fmt.Errorf("%d groups answered", len(resp.Groups))
		}
		g := resp.Groups[0]
		if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
			return nil, err
		}
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return nil, err
				}
				if p.Offset >= 0 {
					out[p.Partition] = p.Offset
				}
			}
		}
		return out, nil
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, err
			}
			if p.Offset >= 0 {
				out[p.Partition] = p.Offset
			}
		}
	}
	return out, nil
}

// joinThrough joins m to group at in until it is answered, retrying while
// the group's partition loads; the first answer's error otherwise.
func joinThrough(ctx context.Context, m *member, in *testInstance, group string) (*kmsg.StreamsGroupHeartbeatResponse, error) {
	for {
		resp, err := m.heartbeat(ctx, in, streamsJoin(group, m.id, "in"))
		if !errors.Is(err, kerr.CoordinatorLoadInProgress) || ctx.Err() != nil {
			return resp, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClusterOwnerMovesMidRequest: the owner's partition moves between the
// origin's routing and the owner's check of the serve call (a hook on the
// owner refuses it and, once the origin has that answer, stops the owner
// gracefully, handing the partition to the origin). The owner did nothing;
// the origin serves the request once its map names the next owner
// (itself), and the member's join is in the group once: its epochs are
// those of one join of a fresh group. The origin counts the refused
// attempt as rerouted. (Stopped before its answer was written, the owner
// would close the link under it: a lost call, never resent, which the
// client gets as COORDINATOR_NOT_AVAILABLE, a different case.)
func TestClusterOwnerMovesMidRequest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var check atomic.Pointer[func(id string, partition int32) bool]
	ins, owners, _ := twoInstancesWith(t, ctx, serveCheckTweak(&check))
	owner, origin := ins[0], ins[1]
	group := groupOwnedBy(owners, owner.id, "app")
	p := coordinator.PartitionFor(group, clusterPartitions)
	var fired atomic.Bool
	stopped := make(chan struct{})
	const rerouted = `streamshift_cluster_forwarded_total{api="StreamsGroupHeartbeat",result="rerouted"}`
	hook := func(id string, part int32) bool {
		if id != owner.id || part != p || !fired.CompareAndSwap(false, true) {
			return true
		}
		go func() {
			defer close(stopped)
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if v, err := origin.metric(rerouted); err == nil && v >= 1 {
					break
				}
			}
			owner.stop()
		}()
		return false
	}
	check.Store(&hook)

	m := &member{id: "m1"}
	resp, err := joinThrough(ctx, m, origin, group)
	if err != nil {
		t.Fatalf("join through %s while %s's partition moves: %v", origin.id, owner.id, err)
	}
	if !fired.Load() {
		t.Fatal("the join never reached the owner's check")
	}
	<-stopped
	if v := origin.metricValue(t, rerouted); v != 1 {
		t.Errorf("%s's forwarded_total of StreamsGroupHeartbeat, rerouted: %v, want 1", origin.id, v)
	}
	// The same join of a group the origin owns from the start is the
	// reference: a join applied twice would move the epochs on.
	ref := &member{id: "m1"}
	refGroup := groupOwnedBy(owners, origin.id, "ref")
	want, err := joinThrough(ctx, ref, origin, refGroup)
	if err != nil {
		t.Fatal(err)
	}
	if resp.MemberEpoch != want.MemberEpoch {
		t.Fatalf("member epoch %d after one join, want %d", resp.MemberEpoch, want.MemberEpoch)
	}
	g, wg := describeStreams(t, ctx, origin, group), describeStreams(t, ctx, origin, refGroup)
	if g.ErrorCode != 0 || len(g.Members) != 1 || g.Epoch != wg.Epoch || g.Members[0].MemberEpoch != wg.Members[0].MemberEpoch {
		t.Fatalf("group at the next owner: %+v, want one member, epochs as %+v", g, wg)
	}
}

// TestClusterFencedOwner: the origin's map still names the owner after
// another writer acquired the group's log partition (the owner is a
// zombie): a write routed to it gets NOT_COORDINATOR, and the log holds no
// record of it.
func TestClusterFencedOwner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	ins, owners, seeds := twoInstances(t, ctx)
	owner, origin := ins[0], ins[1]
	group := groupOwnedBy(owners, owner.id, "app")
	p := coordinator.PartitionFor(group, clusterPartitions)
	m := &member{id: "m1"}
	m.joinUntilAssigned(t, ctx, origin, group, "in")

	newer, err := upstream.OpenSharedGroupLog(ctx, upstream.GroupLogOptions{Seeds: seeds, Partitions: clusterPartitions})
	if err != nil {
		t.Fatal(err)
	}
	defer newer.Close()
	if _, err := newer.Acquire(ctx, p); err != nil {
		t.Fatal(err)
	}
	m2 := &member{id: "m2"}
	if _, err := m2.heartbeat(ctx, origin, streamsJoin(group, m2.id, "in")); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("join through %s at the fenced owner %s: %v, want NOT_COORDINATOR", origin.id, owner.id, err)
	}
	// The fenced owner refuses the next serve call before any work.
	if _, err := m2.heartbeat(ctx, origin, streamsJoin(group, m2.id, "in")); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("second join at the fenced owner: %v, want NOT_COORDINATOR", err)
	}
	newer.Release(p)
	check, err := upstream.OpenSharedGroupLog(ctx, upstream.GroupLogOptions{Seeds: seeds, Partitions: clusterPartitions})
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	recs, err := check.Acquire(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	members := 0
	for _, r := range recs {
		if r.GroupID == group && r.MemberID == m2.id {
			t.Fatalf("the log holds a record of the fenced owner's: %+v", r)
		}
		if r.GroupID == group && r.MemberID == m.id {
			members++
		}
	}
	if members == 0 {
		t.Fatalf("the log holds no record of %s's member %s: %+v", group, m.id, recs)
	}
}

// TestClusterServeCallOfNewerMap: the owner checks a serve call before any
// handling (docs/one-address.md §6 rule 2): routed by a map newer than
// its own (it missed a rebalance) or for a partition it does not hold, it
// answers envelope NOT_COORDINATOR; routed by its own map, it serves.
func TestClusterServeCallOfNewerMap(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	ins, owners, _ := twoInstances(t, ctx)
	owner, other := ins[0], ins[1]
	group := groupOwnedBy(owners, owner.id, "app")
	notOwned := coordinator.PartitionFor(groupOwnedBy(owners, other.id, "app"), clusterPartitions)
	p := coordinator.PartitionFor(group, clusterPartitions)
	gen := owner.view(t).Generation
	if gen <= 0 {
		t.Fatalf("map generation %d", gen)
	}
	link := peer.NewLink(peer.LinkOptions{Self: "test", Peer: owner.id, Addr: owner.view(t).Self.Internal, Timeout: 10 * time.Second})
	defer link.Close()
	for !link.Up() {
		if ctx.Err() != nil {
			t.Fatal("no link to the owner")
		}
		time.Sleep(20 * time.Millisecond)
	}
	call := func(part, mapGen int32) (*kmsg.StreamsGroupDescribeResponse, error) {
		req := kmsg.NewPtrStreamsGroupDescribeRequest()
		req.Version = 0
		req.Groups = []string{group}
		frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("test")).AppendRequest(nil, req, 7)[4:]
		clientID := "test"
		pr := peer.ConnPrincipal{Kind: peer.KindServe, Origin: "test", Incarnation: 1, ConnID: 1, Node: 0,
			ClientID: &clientID, RemoteAddr: "127.0.0.9:1", Partition: part, MapGeneration: mapGen}
		data, err := link.Call(ctx, pr, frame, net.IPv4(127, 0, 0, 9).To4(), 0)
		if err != nil {
			return nil, err
		}
		resp := kmsg.NewPtrStreamsGroupDescribeResponse()
		// A response header v1 (flexible): correlation id, no tags.
		if err := resp.ReadFrom(data[5:]); err != nil {
			return nil, err
		}
		return resp, nil
	}
	if _, err := call(p, gen+1); peer.ErrorCode(err) != kerr.NotCoordinator.Code {
		t.Fatalf("serve call of a newer map: %v, want envelope NOT_COORDINATOR", err)
	}
	if _, err := call(notOwned, gen); peer.ErrorCode(err) != kerr.NotCoordinator.Code {
		t.Fatalf("serve call of a partition the owner does not hold: %v, want envelope NOT_COORDINATOR", err)
	}
	// Admitted, the describe runs (its ACL probe goes back to the origin,
	// which this test is not: the group's answer carries the error).
	resp, err := call(p, gen)
	if err != nil || len(resp.Groups) != 1 || resp.Groups[0].Group != group {
		t.Fatalf("serve call of the owner's map: %+v %v, want the group's answer", resp, err)
	}
}
