package proxy

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestUpstreamRequestsCounted: streamshift_upstream_requests_total{api}
// says what the broker received from this instance, by api: client
// requests forwarded, an interceptor's ask on the client's connection, the
// proxy's own metadata client and a client given UpstreamRequestsHook (the
// coordinator's). kfake counts what it receives; the two must agree.
func TestUpstreamRequestsCounted(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	var mu sync.Mutex
	got := map[string]float64{}
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		got[kmsg.NameForKey(req.Key())]++
		mu.Unlock()
		return nil, nil, false
	})
	p := startProxy(t, c.ListenAddrs(), nil)
	if err := p.Register(int16(kmsg.StreamsGroupHeartbeat), 0, 1, true, askingHeartbeat{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var w addrWatch
	cl := newClient(t, p, &w)
	for range 3 {
		md := kmsg.NewPtrMetadataRequest()
		if _, err := md.RequestWith(ctx, cl.Broker(0)); err != nil {
			t.Fatal(err)
		}
		hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		hb.Group = "t" // the interceptor asks the broker for topic t's metadata
		resp, err := hb.RequestWith(ctx, cl.Broker(0))
		if err != nil {
			t.Fatal(err)
		}
		if deref(resp.ErrorMessage) != "t=0" {
			t.Fatalf("the ask was answered %q", deref(resp.ErrorMessage))
		}
	}
	own, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), p.UpstreamRequestsHook())
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if _, err := kmsg.NewPtrListGroupsRequest().RequestWith(ctx, own.Broker(0)); err != nil {
		t.Fatal(err)
	}
	counted := func() map[string]float64 {
		reg := prometheus.NewRegistry()
		reg.MustRegister(p.m.upstreamRequests)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				if v := m.GetCounter().GetValue(); v > 0 {
					out[m.GetLabel()[0].GetValue()] = v
				}
			}
		}
		return out
	}
	// The proxy's metadata refreshes go on meanwhile: compare at a moment
	// when the metric did not move around kfake's count.
	waitFor(t, "the metric to equal the broker's count", func() error {
		before := counted()
		mu.Lock()
		broker := maps.Clone(got)
		mu.Unlock()
		after := counted()
		if !maps.Equal(before, after) {
			return errNotYet
		}
		if !maps.Equal(after, broker) {
			return fmt.Errorf("streamshift_upstream_requests_total %v, the broker received %v", after, broker)
		}
		return nil
	})
	if n := counted()["StreamsGroupHeartbeat"]; n != 0 {
		t.Errorf("%v StreamsGroupHeartbeat counted upstream: answered by the interceptor, never sent", n)
	}
}
