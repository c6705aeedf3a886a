package route

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/proxy/peer"
)

// hopOrigin is a second instance in front of e's cluster whose clients'
// StreamsGroupHeartbeats hop to e's proxy (the owner) in serve calls over
// real links, as the cluster gate sends them (route/cluster.go).
func hopOrigin(t *testing.T, e *env) (addr string) {
	t.Helper()
	origin, addr, _ := startProxy(t, e.cluster.ListenAddrs(), nil)
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	links, peers := map[string]*peer.Links{}, map[string]string{}
	for id, p := range map[string]*proxy.Proxy{"origin": origin, "owner": e.p} {
		links[id] = peer.NewLinks(peer.LinkOptions{Self: id, Log: log})
		t.Cleanup(links[id].Close)
		pl, err := peer.Listen(peer.ListenerOptions{Addr: "127.0.0.1:0", Handlers: p.PeerHandlers(id, links[id]), Log: log})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pl.Close() })
		peers[id] = pl.Addr().String()
	}
	links["origin"].Update(map[string]string{"owner": peers["owner"]})
	links["owner"].Update(map[string]string{"origin": peers["origin"]})
	toOwner := proxy.InterceptorFunc(func(req *proxy.Request, out proxy.Outcome) {
		data, err := origin.ServeRemote(context.Background(), links["origin"].Link("owner"), req, 0, 0, 0)
		if err != nil {
			t.Errorf("serve call: %v", err)
		}
		out.(proxy.FrameResponder).RespondFrame(data)
	})
	if err := origin.Register(int16(kmsg.StreamsGroupHeartbeat), 0, 1, true, toOwner); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "links up", func() error {
		if !links["origin"].Link("owner").Up() || !links["owner"].Link("origin").Up() {
			return errors.New("not yet")
		}
		return nil
	})
	return addr
}

// TestHoppedHeartbeatRefreshLands: the background refresh of a group READ
// answer made for a heartbeat that hopped to the group's owner lands,
// though the owner answers the heartbeat before the broker answers the
// refresh, so the next heartbeats use it and ask the broker nothing. Before
// (issue #43), its answer was dropped with the serve call: every hopped
// heartbeat past half the answer's life sent another DescribeGroups, and
// the expired answer a Heartbeat probe (three instances: 0.10 DescribeGroups
// and 0.09 Heartbeats upstream per heartbeat).
func TestHoppedHeartbeatRefreshLands(t *testing.T) {
	const ttl = 10 * time.Second
	e := newEnv(t, func(e *env) { e.authCache = ttl })
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	a := e.routes.auth
	a.mu.Lock()
	a.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a.mu.Unlock()
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	var describes, probes atomic.Int64
	e.cluster.ControlKey(int16(kmsg.DescribeGroups), func(kmsg.Request) (kmsg.Response, error, bool) {
		e.cluster.KeepControl()
		describes.Add(1)
		return nil, nil, false
	})
	e.cluster.ControlKey(int16(kmsg.Heartbeat), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		e.cluster.KeepControl()
		if kr.(*kmsg.HeartbeatRequest).MemberID == probeMemberID {
			probes.Add(1)
		}
		return nil, nil, false
	})

	cl, err := kgo.NewClient(kgo.SeedBrokers(hopOrigin(t, e)), kgo.ClientID("streams-app"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	b := e.coordinatorOf("app", cl)
	resp, err := join("app", "m1").RequestWith(e.ctx, b)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("join through the origin: %v %v", err, resp)
	}
	epoch := resp.MemberEpoch
	heartbeat := func() {
		t.Helper()
		hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		hb.Group, hb.MemberID, hb.MemberEpoch = "app", "m1", epoch
		r, err := hb.RequestWith(e.ctx, b)
		if err != nil || r.ErrorCode != 0 {
			t.Fatalf("heartbeat through the origin: %v %v", err, r)
		}
		epoch = r.MemberEpoch
		// The refresh it may have started is over: answered, or
		// failed and left to expire.
		waitFor(t, "no refresh in flight", func() error {
			a.mu.Lock()
			defer a.mu.Unlock()
			for k, en := range a.entries {
				if k.name == "app" && k.resource == kmsg.ACLResourceTypeGroup && en.refreshing {
					return errors.New("not yet")
				}
			}
			return nil
		})
	}
	heartbeat()
	if n := probes.Load(); n != 1 {
		t.Fatalf("the member's first heartbeats sent %d READ probes, want 1", n)
	}
	d0 := describes.Load()

	// Past half the answer's life: the next heartbeat refreshes it in the
	// background (one DescribeGroups); the ones after use the new answer.
	advance(ttl/2 + time.Second)
	const n = 5
	for range n {
		heartbeat()
	}
	if got := describes.Load() - d0; got != 1 {
		t.Errorf("%d hopped heartbeats past half the answer's life sent %d DescribeGroups upstream, want 1 (the refresh's answer must land after the owner answered)", n, got)
	}
	// At the end of the old answer's life, before half the new one's:
	// nothing asked.
	advance(ttl/2 - time.Second)
	heartbeat()
	if got := probes.Load(); got != 1 {
		t.Errorf("READ probes sent: %d, want 1 (the refreshed answer serves until it is half its life old)", got)
	}
	if got := describes.Load() - d0; got != 1 {
		t.Errorf("DescribeGroups sent: %d, want 1", got)
	}
}
