package proxy

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// fakeHeartbeat answers StreamsGroupHeartbeat locally, as the coordinator
// will, and records what it was given.
type fakeHeartbeat struct {
	mu   sync.Mutex
	reqs []*Request
}

func (f *fakeHeartbeat) Intercept(req *Request, out Outcome) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	hb := req.Body.(*kmsg.StreamsGroupHeartbeatRequest)
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.MemberID = hb.MemberID
	resp.MemberEpoch = hb.MemberEpoch + 1
	resp.HeartbeatIntervalMillis = 5000
	// Answer from another goroutine, later, as a coordinator would.
	go func() {
		time.Sleep(10 * time.Millisecond)
		out.Respond(resp)
	}()
}

func TestInterceptLocalAnswer(t *testing.T) {
	t.Parallel()
	c := newCluster(t) // kfake has no StreamsGroupHeartbeat: a broker without KIP-1071
	p := startProxy(t, c.ListenAddrs(), nil)
	var fake fakeHeartbeat
	if err := p.Register(int16(kmsg.StreamsGroupHeartbeat), 0, 1, true, &fake); err != nil {
		t.Fatal(err)
	}
	var w addrWatch
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := newClient(t, p, &w)

	vers, err := kadm.NewClient(cl).ApiVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vers.Each(func(bv kadm.BrokerApiVersions) {
		min, max, ok := bv.KeyVersions(int16(kmsg.StreamsGroupHeartbeat))
		if !ok || min != 0 || max != 1 {
			t.Errorf("node %d advertises StreamsGroupHeartbeat %v %d..%d, want 0..1", bv.NodeID, ok, min, max)
		}
	})

	if err := cl.Ping(ctx); err != nil { // load metadata so Broker(1) is known
		t.Fatal(err)
	}
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group = "app"
	req.MemberID = "m-1"
	req.MemberEpoch = 6
	resp, err := req.RequestWith(ctx, cl.Broker(1))
	if err != nil {
		t.Fatal(err)
	}
	if resp.MemberEpoch != 7 || resp.MemberID != "m-1" || resp.HeartbeatIntervalMillis != 5000 {
		t.Errorf("response %+v", resp)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.reqs) != 1 {
		t.Fatalf("%d intercepted requests", len(fake.reqs))
	}
	got := fake.reqs[0]
	if got.Client.Node != 1 || got.Client.ClientID != "kgo" || got.Client.SoftwareName == "" || got.Version != 1 {
		t.Errorf("request info %+v", got)
	}
	if hb := got.Body.(*kmsg.StreamsGroupHeartbeatRequest); hb.Group != "app" || hb.MemberEpoch != 6 {
		t.Errorf("decoded body %+v", hb)
	}
}

// commitRewriter rewrites commits of group "rewrite" (offset+1, as the
// coordinator will rewrite member ids and epochs) on the client's own
// connection, down-converting to v7, and marks the response.
type commitRewriter struct{ forwarded, rewritten atomic.Int32 }

func (r *commitRewriter) Intercept(req *Request, out Outcome) {
	oc := req.Body.(*kmsg.OffsetCommitRequest)
	if oc.Group != "rewrite" {
		r.forwarded.Add(1)
		out.Forward()
		return
	}
	r.rewritten.Add(1)
	for i := range oc.Topics {
		for j := range oc.Topics[i].Partitions {
			oc.Topics[i].Partitions[j].Offset++
		}
	}
	version := min(req.Version, 7)
	out.ForwardRewritten(oc, version, func(resp kmsg.Response) kmsg.Response {
		if resp.GetVersion() != version {
			panic("response not at the forwarded version")
		}
		ocr := resp.(*kmsg.OffsetCommitResponse)
		ocr.ThrottleMillis = 1 // visible proof the transform ran
		return ocr
	})
}

func TestInterceptRewriteOffsetCommit(t *testing.T) {
	t.Parallel()
	c := newCluster(t, kfake.SeedTopics(2, "oc"))
	p := startProxy(t, c.ListenAddrs(), nil)
	var rw commitRewriter
	if err := p.Register(int16(kmsg.OffsetCommit), 0, kmsg.NewPtrOffsetCommitRequest().MaxVersion(), false, &rw); err != nil {
		t.Fatal(err)
	}
	var w addrWatch
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// v10 names topics by id only; the test's request names them.
	vers := kversion.Stable()
	vers.SetMaxKeyVersion(int16(kmsg.OffsetCommit), 9)
	cl := newClient(t, p, &w, kgo.MaxVersions(vers))
	adm := kadm.NewClient(cl)
	for _, group := range []string{"rewrite", "plain"} {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group = group
		req.Generation = -1
		topic := kmsg.NewOffsetCommitRequestTopic()
		topic.Topic = "oc"
		part := kmsg.NewOffsetCommitRequestTopicPartition()
		part.Partition = 1
		part.Offset = 42
		topic.Partitions = append(topic.Partitions, part)
		req.Topics = append(req.Topics, topic)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if err := kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode); err != nil {
			t.Fatalf("commit %s: %v", group, err)
		}
		if wantThrottle := int32(map[string]int{"rewrite": 1, "plain": 0}[group]); resp.ThrottleMillis != wantThrottle {
			t.Errorf("commit %s: throttle %d, want %d (transform ran only for the rewritten)", group, resp.ThrottleMillis, wantThrottle)
		}
	}
	for group, want := range map[string]int64{"rewrite": 43, "plain": 42} {
		offs, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		o, ok := offs.Lookup("oc", 1)
		got := int64(-1)
		if ok {
			got = o.At
		}
		if got != want {
			t.Errorf("group %s partition 1 committed %d, want %d", group, got, want)
		}
	}
	if rw.forwarded.Load() == 0 || rw.rewritten.Load() != 1 {
		t.Errorf("forwarded %d rewritten %d", rw.forwarded.Load(), rw.rewritten.Load())
	}
}

func TestRegisterRejects(t *testing.T) {
	t.Parallel()
	p, err := New(Options{Upstream: []string{"x:1"}, Listen: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	i := InterceptorFunc(func(*Request, Outcome) {})
	for _, tc := range []struct {
		key, min, max int16
		i             Interceptor
	}{
		{9999, 0, 0, i},
		{88, 0, 9, i},
		{88, 1, 0, i},
		{88, 0, 1, nil},
		{18, 0, 3, i},
	} {
		if err := p.Register(tc.key, tc.min, tc.max, true, tc.i); err == nil {
			t.Errorf("Register(%d, %d, %d) accepted", tc.key, tc.min, tc.max)
		}
	}
}

// TestRegisterTwice: a key has one interceptor; a second registration of it,
// plain or capped, is refused with an error naming the key, and the first
// stays.
func TestRegisterTwice(t *testing.T) {
	t.Parallel()
	p, err := New(Options{Upstream: []string{"x:1"}, Listen: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	first := InterceptorFunc(func(*Request, Outcome) {})
	key := int16(kmsg.OffsetCommit)
	if err := p.Register(key, 0, 9, true, first); err != nil {
		t.Fatal(err)
	}
	for name, register := range map[string]func(key, min, max int16, advertise bool, i Interceptor) error{
		"Register": p.Register, "RegisterCapped": p.RegisterCapped,
	} {
		err := register(key, 0, 8, false, InterceptorFunc(func(*Request, Outcome) {}))
		if err == nil {
			t.Fatalf("%s of key %d a second time accepted", name, key)
		}
		if msg := err.Error(); !strings.Contains(msg, "OffsetCommit") || !strings.Contains(msg, "key 8") {
			t.Fatalf("%s twice: %q does not name the key", name, msg)
		}
	}
	reg := p.reg.lookup(key, 9)
	if reg == nil || reg.maxVersion != 9 || !reg.advertise || reg.capped {
		t.Fatalf("the first registration did not stay: %+v", reg)
	}
	// Another key still registers.
	if err := p.Register(int16(kmsg.OffsetFetch), 0, 9, true, first); err != nil {
		t.Fatalf("another key: %v", err)
	}
}
