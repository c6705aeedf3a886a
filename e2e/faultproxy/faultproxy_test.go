package faultproxy

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fixture is a kfake cluster of two brokers behind a fault proxy, and a
// count of the requests of each key the brokers saw.
type fixture struct {
	c    *kfake.Cluster
	p    *Proxy
	mu   sync.Mutex
	seen map[int16]int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	f := &fixture{c: c, seen: map[int16]int{}}
	for _, key := range []int16{3, 8, 10, 11, 12, 26} {
		c.ControlKey(key, func(req kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			f.mu.Lock()
			f.seen[req.Key()]++
			f.mu.Unlock()
			return nil, nil, false
		})
	}
	p, err := Start(c.ListenAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	p.Logf = t.Logf
	t.Cleanup(func() { p.Close() })
	f.p = p
	return f
}

func (f *fixture) saw(key int16) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[key]
}

func (f *fixture) client(t *testing.T, clientID string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.p.Addr()), kgo.ClientID(clientID), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// coordinator is a direct line to the broker coordinating group, through
// the proxy (no retries: the test sees each answer).
func coordinator(ctx context.Context, t *testing.T, cl *kgo.Client, group string) *kgo.Broker {
	t.Helper()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey = group
	req.CoordinatorKeys = []string{group}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	return cl.Broker(int(resp.Coordinators[0].NodeID))
}

func heartbeat(ctx context.Context, b *kgo.Broker, group string) (int16, error) {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.MemberID, req.Generation = group, "m", 1
	resp, err := req.RequestWith(ctx, b)
	if err != nil {
		return 0, err
	}
	return resp.ErrorCode, nil
}

// Every broker the cluster names is one of the proxy's listeners, and a
// client that only knows the proxy produces and consumes through it.
func TestAddressesRewritten(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := f.client(t, "plain")
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Brokers) != 2 {
		t.Fatalf("%d brokers, want 2", len(resp.Brokers))
	}
	f.p.mu.Lock()
	n := len(f.p.listeners)
	f.p.mu.Unlock()
	if n != 2 { // the bootstrap's is broker 0's or 1's
		t.Fatalf("%d listeners after the metadata, want one per broker", n)
	}
	for _, b := range resp.Brokers {
		ok := false
		f.p.mu.Lock()
		for _, l := range f.p.listeners {
			a := l.ln.Addr().String()
			ok = ok || a == net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		}
		f.p.mu.Unlock()
		if !ok {
			t.Errorf("broker %d at %s:%d: not a proxy listener", b.NodeID, b.Host, b.Port)
		}
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: 1, Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce through the proxy: %v", err)
	}
}

// InjectError answers the group's requests of the key with the error, by
// itself (the broker sees none), then switched off the broker answers again;
// another group and another key are untouched.
func TestInjectError(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := f.client(t, "app-1")
	b := coordinator(ctx, t, cl, "g")
	r := f.p.InjectError(12, kerr.CoordinatorNotAvailable.Code, Match{Group: "g"})
	before := f.saw(12)
	if code, err := heartbeat(ctx, b, "g"); err != nil || code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("heartbeat of g: code %d, %v; want COORDINATOR_NOT_AVAILABLE", code, err)
	}
	if f.saw(12) != before {
		t.Fatal("the broker saw the heartbeat the proxy answered")
	}
	// Another group: the broker's own answer (kfake: no such member).
	if code, err := heartbeat(ctx, b, "other"); err != nil || code == kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("heartbeat of another group: code %d, %v; want the broker's answer", code, err)
	}
	if r.Hits() != 1 {
		t.Fatalf("%d hits, want 1", r.Hits())
	}
	r.Off()
	r2 := f.p.InjectError(12, kerr.NotCoordinator.Code, Match{Group: "g", ClientID: "app-"})
	if code, err := heartbeat(ctx, b, "g"); err != nil || code != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat of g after the switch: code %d, %v; want NOT_COORDINATOR", code, err)
	}
	r2.Off()
	if code, err := heartbeat(ctx, b, "g"); err != nil || code == kerr.NotCoordinator.Code || code == kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("heartbeat of g with the rule off: code %d, %v; want the broker's answer", code, err)
	}
	// A commit's error is on every partition it carried, at the request's version.
	f.p.InjectError(8, kerr.NotCoordinator.Code, Match{ClientID: "app-1"})
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation, oc.MemberID = "g", -1, ""
	ot := kmsg.NewOffsetCommitRequestTopic()
	ot.Topic = "t"
	for p := range int32(2) {
		op := kmsg.NewOffsetCommitRequestTopicPartition()
		op.Partition, op.Offset = p, 1
		ot.Partitions = append(ot.Partitions, op)
	}
	oc.Topics = append(oc.Topics, ot)
	resp, err := oc.RequestWith(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("commit answer %+v: want topic t's two partitions", resp.Topics)
	}
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != kerr.NotCoordinator.Code {
			t.Fatalf("partition %d: code %d, want NOT_COORDINATOR", p.Partition, p.ErrorCode)
		}
	}
}

// DisconnectOn closes the connection before the broker sees the request;
// DisconnectAfter after it saw it: the client gets no answer either way and
// reconnects once the rule is off.
func TestDisconnectOn(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := f.client(t, "app-1")
	b := coordinator(ctx, t, cl, "g")
	for _, after := range []bool{false, true} {
		var r *Rule
		if after {
			r = f.p.DisconnectAfter(12, Match{ClientID: "app-1"})
		} else {
			r = f.p.DisconnectOn(12, Match{ClientID: "app-1"})
		}
		before := f.saw(12)
		if _, err := heartbeat(ctx, b, "g"); err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("after forward %v: heartbeat answered (%v), want the connection closed", after, err)
		}
		if saw := f.saw(12) - before; (saw == 1) != after {
			t.Fatalf("after forward %v: the broker saw %d heartbeats", after, saw)
		}
		if r.Hits() != 1 {
			t.Fatalf("%d hits, want 1", r.Hits())
		}
		r.Off()
		if _, err := heartbeat(ctx, b, "g"); err != nil {
			t.Fatalf("heartbeat with the rule off: %v", err)
		}
	}
	// Times: the first request only.
	r := f.p.DisconnectAfter(12, Match{Times: 1})
	if _, err := heartbeat(ctx, b, "g"); err == nil {
		t.Fatal("first heartbeat answered, want the connection closed")
	}
	if _, err := heartbeat(ctx, b, "g"); err != nil {
		t.Fatalf("second heartbeat past Times: %v", err)
	}
	if r.Hits() != 1 {
		t.Fatalf("%d hits, want 1", r.Hits())
	}
}

// DelayOn holds the key's answers (and those behind it on the connection),
// not the others'.
func TestDelayOn(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := f.client(t, "app-1")
	b := coordinator(ctx, t, cl, "g")
	r := f.p.DelayOn(3, 700*time.Millisecond, Match{})
	start := time.Now()
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, b); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 700*time.Millisecond {
		t.Fatalf("metadata answered in %s, want ≥ 700ms", d)
	}
	start = time.Now()
	if _, err := heartbeat(ctx, b, "g"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= 700*time.Millisecond {
		t.Fatalf("heartbeat answered in %s: delayed too", d)
	}
	// Pipelined on one connection: a delayed metadata, then an injected
	// error; the error waits its turn (answers go back in order, or the
	// client would see a correlation id it did not expect).
	e := f.p.InjectError(12, kerr.NotCoordinator.Code, Match{})
	var wg sync.WaitGroup
	var hbDone atomic.Int64
	wg.Add(2)
	metaSent := time.Now()
	go func() {
		defer wg.Done()
		if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, b); err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(100 * time.Millisecond)
	go func() {
		defer wg.Done()
		if code, err := heartbeat(ctx, b, "g"); err != nil || code != kerr.NotCoordinator.Code {
			t.Errorf("pipelined heartbeat: code %d, %v", code, err)
		}
		hbDone.Store(time.Now().UnixNano())
	}()
	wg.Wait()
	// Both answers may arrive in one read, so the two goroutines' wake-up
	// order says nothing; an answer that overtook the delayed one would
	// come before the delay ran out.
	if hb := time.Unix(0, hbDone.Load()); hb.Sub(metaSent) < 700*time.Millisecond {
		t.Fatalf("the injected answer came %s after the delayed request was sent: it overtook it", hb.Sub(metaSent))
	}
	e.Off()
	r.Off()
	start = time.Now()
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, b); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= 700*time.Millisecond {
		t.Fatalf("metadata answered in %s with the delay off", d)
	}
}

// BlackholeClient swallows the client's requests and keeps its connection;
// other clients are served.
func TestBlackholeClient(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	victim, other := f.client(t, "app-victim-1"), f.client(t, "app-2")
	bv, bo := coordinator(ctx, t, victim, "g"), coordinator(ctx, t, other, "g")
	// Connected and answered once: what is swallowed next is the request
	// itself, on a live connection.
	if _, err := heartbeat(ctx, bv, "g"); err != nil {
		t.Fatal(err)
	}
	r := f.p.BlackholeClient("victim")
	before := f.saw(12)
	short, stop := context.WithTimeout(ctx, 800*time.Millisecond)
	defer stop()
	if _, err := heartbeat(short, bv, "g"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("blackholed heartbeat: %v, want no answer (deadline exceeded)", err)
	}
	if f.saw(12) != before {
		t.Fatal("the broker saw a blackholed request")
	}
	if _, err := heartbeat(ctx, bo, "g"); err != nil {
		t.Fatalf("another client: %v", err)
	}
	f.p.mu.Lock()
	open := 0
	for c := range f.p.conns {
		select {
		case <-c.done:
		default:
			open++
		}
	}
	f.p.mu.Unlock()
	if open < 2 {
		t.Fatalf("%d connections open, want the victim's kept", open)
	}
	if r.Hits() < 1 {
		t.Fatal("no hit")
	}
}
