package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/coordinator"
)

// metricValue is series (name{labels}, labels in name order, as the
// exposition writes them) on the instance's /metrics; 0 when absent.
func (in *testInstance) metricValue(t *testing.T, series string) float64 {
	t.Helper()
	v, err := in.metric(series)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// metric is metricValue off the test's goroutine: its error, not a fatal.
func (in *testInstance) metric(series string) (float64, error) {
	resp, err := http.Get("http://" + in.admin + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", series, err)
			}
			return f, nil
		}
	}
	return 0, sc.Err()
}

// TestClusterForwardMetrics: a streams member joining and heartbeating
// through the instance that does not own its group moves that instance's
// streamshift_cluster_forwarded_total{result="ok"} and
// streamshift_cluster_forward_seconds of StreamsGroupHeartbeat, and the
// owner's streamshift_cluster_served_calls_total of serve calls; the
// member's OffsetCommit through it moves the owner's
// streamshift_cluster_upstream_calls_total (the rewritten commit goes back
// to the origin) and the origin's served upstream calls; /cluster
// shows each instance's link to the other: its address (the peer's
// internal one), up since when, nothing in flight, no error.
func TestClusterForwardMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	ins, owners, _ := twoInstances(t, ctx)
	owner, origin := ins[0], ins[1]
	group := groupOwnedBy(owners, owner.id, "app")

	m := &member{id: "m1"}
	m.joinUntilAssigned(t, ctx, origin, group, "in")
	const hb = `{api="StreamsGroupHeartbeat"`
	if v := origin.metricValue(t, `streamshift_cluster_forwarded_total`+hb+`,result="ok"}`); v < 2 {
		t.Errorf("%s's forwarded_total of StreamsGroupHeartbeat, ok: %v, want the join and its heartbeats (≥ 2)", origin.id, v)
	}
	if v := origin.metricValue(t, `streamshift_cluster_forward_seconds_count`+hb+`}`); v < 2 {
		t.Errorf("%s's forward_seconds_count of StreamsGroupHeartbeat: %v, want ≥ 2", origin.id, v)
	}
	if v := owner.metricValue(t, `streamshift_cluster_served_calls_total{kind="serve",result="ok"}`); v < 2 {
		t.Errorf("%s's served_calls_total of serve calls, ok: %v, want ≥ 2", owner.id, v)
	}
	if v := owner.metricValue(t, `streamshift_cluster_forwarded_total`+hb+`,result="ok"}`); v != 0 {
		t.Errorf("the owner %s forwarded %v heartbeats of its own group", owner.id, v)
	}

	// The member's commit through the origin: the owner rewrites it to
	// the group's anchor and sends it back to the origin, for the
	// member's own upstream connection (an upstream call).
	commit := m.commitRequest(group, "in", 1)
	cresp, err := commit.RequestWith(ctx, origin.node0())
	if err != nil {
		t.Fatal(err)
	}
	if code := cresp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("commit through %s: %v", origin.id, kerr.ErrorForCode(code))
	}
	if v := owner.metricValue(t, `streamshift_cluster_upstream_calls_total{api="OffsetCommit",result="ok"}`); v != 1 {
		t.Errorf("%s's upstream_calls_total of OffsetCommit, ok: %v, want 1", owner.id, v)
	}
	if v := origin.metricValue(t, `streamshift_cluster_served_calls_total{kind="upstream",result="ok"}`); v < 1 {
		t.Errorf("%s's served_calls_total of upstream calls, ok: %v, want ≥ 1", origin.id, v)
	}

	for _, in := range ins {
		v := in.view(t)
		for _, peer := range ins {
			if peer == in {
				continue
			}
			l, ok := v.Links[peer.id]
			if !ok || l.Peer != peer.id || l.Address != v.Instances[peer.id].Internal || l.Address == "" || !l.Up ||
				l.ConnectedSince == nil || l.ConnectedSince.IsZero() || l.Inflight["serve"] != 0 || l.LastError != "" {
				t.Errorf("/cluster at %s, link to %s: %+v, want up at %s since a time, nothing in flight, no error",
					in.id, peer.id, l, v.Instances[peer.id].Internal)
			}
		}
	}
}

// TestClusterForwardRefusedMetric: with cluster.max-inflight-per-peer 1
// and one serve call held at the owner (a hook in its check of the call),
// the origin shows the call in streamshift_cluster_peer_inflight and on
// /cluster; a second request through the origin is refused at once
// (COORDINATOR_NOT_AVAILABLE), counted in
// streamshift_cluster_forward_refused_total{reason="inflight"} and
// forwarded_total{result="refused"}; the held call then completes.
func TestClusterForwardRefusedMetric(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var check atomic.Pointer[func(id string, partition int32) bool]
	ins, owners, _ := twoInstancesWith(t, ctx, serveCheckTweak(&check), "STREAMSHIFT_CLUSTER_MAX_INFLIGHT_PER_PEER=1")
	owner, origin := ins[0], ins[1]
	group := groupOwnedBy(owners, owner.id, "app")
	p := coordinator.PartitionFor(group, clusterPartitions)

	var fired atomic.Bool
	held, release := make(chan struct{}), make(chan struct{})
	hook := func(id string, part int32) bool {
		if id == owner.id && part == p && fired.CompareAndSwap(false, true) {
			close(held)
			<-release
		}
		return true
	}
	check.Store(&hook)
	var released atomic.Bool
	free := func() {
		if released.CompareAndSwap(false, true) {
			close(release)
		}
	}
	t.Cleanup(func() { free(); check.Store(nil) })

	m := &member{id: "m1"}
	joined := make(chan error, 1)
	go func() {
		resp, err := joinThrough(ctx, m, origin, group)
		if err != nil && resp != nil && resp.ErrorMessage != nil {
			err = fmt.Errorf("%w (%s)", err, *resp.ErrorMessage)
		}
		joined <- err
	}()
	select {
	case <-held:
	case err := <-joined:
		t.Fatalf("the join ended (%v) without reaching the owner's check", err)
	case <-ctx.Done():
		t.Fatal("the join never reached the owner's check")
	}
	inflight := `streamshift_cluster_peer_inflight{kind="serve",peer="` + owner.id + `"}`
	if v := origin.metricValue(t, inflight); v != 1 {
		t.Errorf("%s: %v, want the held call", inflight, v)
	}
	if l := origin.view(t).Links[owner.id]; l.Inflight["serve"] != 1 {
		t.Errorf("/cluster at %s, link to %s: %+v, want one serve call in flight", origin.id, owner.id, l)
	}

	// A second client of the origin: its request finds the budget full.
	cl, err := kgo.NewClient(kgo.SeedBrokers(origin.bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := streamsJoin(group, "m2", "in").RequestWith(ctx, cl.Broker(0))
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(kerr.ErrorForCode(resp.ErrorCode), kerr.CoordinatorNotAvailable) {
		t.Fatalf("a second join while the budget is full: %v, want COORDINATOR_NOT_AVAILABLE", kerr.ErrorForCode(resp.ErrorCode))
	}
	if v := origin.metricValue(t, `streamshift_cluster_forward_refused_total{reason="inflight"}`); v != 1 {
		t.Errorf("%s's forward_refused_total{reason=\"inflight\"}: %v, want 1", origin.id, v)
	}
	if v := origin.metricValue(t, `streamshift_cluster_forwarded_total{api="StreamsGroupHeartbeat",result="refused"}`); v != 1 {
		t.Errorf("%s's forwarded_total of StreamsGroupHeartbeat, refused: %v, want 1", origin.id, v)
	}

	free()
	if err := <-joined; err != nil {
		// A retriable answer (a CI run once saw COORDINATOR_NOT_AVAILABLE
		// here, cause unknown): the client retries, and the retry must
		// succeed through the origin.
		if !errors.Is(err, kerr.CoordinatorNotAvailable) && !errors.Is(err, kerr.NotCoordinator) {
			t.Fatalf("the held join: %v", err)
		}
		t.Logf("the held join: %v; retrying as a client does", err)
		if _, err := joinThrough(ctx, m, origin, group); err != nil {
			t.Fatalf("the held join, retried: %v", err)
		}
	}
	if v := origin.metricValue(t, inflight); v != 0 {
		t.Errorf("%s after the held call: %v, want 0", inflight, v)
	}
}
