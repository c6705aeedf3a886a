package main

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/upstream/anchor"
)

// A streams group Empty for the check interval (virtual time) is deleted
// and its anchor member leaves the upstream group, which is then Empty
// (its offsets under the upstream's own retention); a member joining
// later starts a fresh group, and its anchor joins again.
func TestExpiredGroupsAnchorLeaves(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "foo"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	anchors, err := anchor.New(anchor.Options{Client: cl, InstanceID: "streamshift-p1", HeartbeatInterval: 50 * time.Millisecond, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(anchors.Close)

	clock := coordinator.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	md := coordinator.NewStaticMetadata()
	md.SetTopic("foo", 2)
	var coord *coordinator.Coordinator
	expired := &expiredAnchors{
		leave:   anchors.Leave,
		served:  func(g string) bool { return coord.Owns(g) },
		timeout: 10 * time.Second,
		log:     zerolog.Nop(),
		count:   newExpiredCounter(),
	}
	reg := prometheus.NewRegistry()
	registerAnchorMetrics(reg, anchors, expired.count)
	metric := func(name string) float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == name {
				m := mf.GetMetric()[0]
				if m.GetCounter() != nil {
					return m.GetCounter().GetValue()
				}
				return m.GetGauge().GetValue()
			}
		}
		t.Fatalf("no metric %s", name)
		return 0
	}
	coord, err = coordinator.New(coordinator.Options{Clock: clock, Metadata: md, GroupExpiration: 10 * time.Minute, OnGroupExpired: expired.expired})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	heartbeat := func(r *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
		t.Helper()
		done := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
		coord.StreamsGroupHeartbeat(r, streams.ClientInfo{ClientID: "c", ClientHost: "/127.0.0.1"}, func(resp *kmsg.StreamsGroupHeartbeatResponse) { done <- resp })
		resp := <-done
		if resp.ErrorCode != 0 {
			t.Fatalf("heartbeat: error %d", resp.ErrorCode)
		}
		return resp
	}
	join := func(member string) {
		t.Helper()
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group, r.MemberID, r.RebalanceTimeoutMillis = "g", member, 30000
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		st.SubtopologyID, st.SourceTopics = "0", []string{"foo"}
		topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
		r.Topology = &topo
		heartbeat(r)
		// What route does for every heartbeat of a served group.
		anchors.Ensure("g", []string{"foo"})
		if _, err := anchors.Generation(ctx, "g"); err != nil {
			t.Fatal(err)
		}
	}
	upstreamMembers := func() int {
		t.Helper()
		d, err := adm.DescribeGroups(ctx, "g")
		if err != nil {
			t.Fatal(err)
		}
		return len(d["g"].Members)
	}

	join("m1")
	r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = "g", "m1", -1, -1
	heartbeat(r)
	clock.Advance(10*time.Minute - time.Second)
	if !coord.Owns("g") || !anchors.Running("g") || upstreamMembers() != 1 {
		t.Fatal("the group or its anchor went before the check interval")
	}
	if n := metric("streamshift_anchor_members"); n != 1 {
		t.Fatalf("streamshift_anchor_members %v, want 1", n)
	}
	clock.Advance(time.Second)
	if coord.Owns("g") {
		t.Fatal("the Empty group was not deleted after the check interval")
	}
	if n := metric("streamshift_groups_expired_total"); n != 1 {
		t.Fatalf("streamshift_groups_expired_total %v, want 1", n)
	}
	for upstreamMembers() != 0 || anchors.Running("g") {
		if ctx.Err() != nil {
			t.Fatal("the anchor of the expired group never left the upstream group")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := metric("streamshift_anchor_members"); n != 0 {
		t.Fatalf("streamshift_anchor_members %v after the anchor left, want 0", n)
	}
	join("m2")
	if !coord.Owns("g") || upstreamMembers() != 1 {
		t.Fatal("a member joining after the expiry did not start a fresh group with its anchor")
	}
}
