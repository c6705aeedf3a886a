package route

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/proxy/peer"
	"github.com/streamshift/streamshift/proxy/proxytest"
)

// fakeCluster is a cluster map the test sets: owners names the owner the
// map gives at each Owner call in turn (the last one stays), "" nobody,
// "self" this instance.
type fakeCluster struct {
	mu      sync.Mutex
	owners  []string
	hops    bool
	serving error
	// answers are Forward's results in turn: an error or a frame.
	answers []error
	frame   []byte
	calls   []string
	// undecoded says of each call whether the request went undecoded.
	undecoded []bool
}

func (f *fakeCluster) Serving(string) error { return f.serving }
func (f *fakeCluster) Coordinator(string, int32) (string, int32, bool) {
	return "", 0, false
}
func (f *fakeCluster) Owner(string) (bool, string, int32, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.owners[0]
	if len(f.owners) > 1 {
		f.owners = f.owners[1:]
	}
	return o == "self", o, 1, o != ""
}
func (f *fakeCluster) Hops() bool { return f.hops }
func (f *fakeCluster) Forward(_ context.Context, peer, _ string, _ int32, req *proxy.Request, _ time.Duration) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, peer)
	f.undecoded = append(f.undecoded, req.Body == nil)
	err := f.answers[0]
	f.answers = f.answers[1:]
	if err != nil {
		return nil, err
	}
	return f.frame, nil
}
func (f *fakeCluster) ForwardTimeout() time.Duration { return 10 * time.Second }
func (f *fakeCluster) Peers() []string               { return nil }
func (f *fakeCluster) ServedGroups(context.Context, string, *proxy.Request, time.Duration) ([]kmsg.ListGroupsResponseGroup, error) {
	return nil, nil
}

// frameOutcome records RespondFrame too (the proxy's Outcome has it).
type frameOutcome struct {
	*proxytest.Outcome
	frame chan []byte
}

func (o *frameOutcome) RespondFrame(data []byte) { o.frame <- data }

// wantFrame fails unless the outcome is answered with frame before ctx ends.
func (o *frameOutcome) wantFrame(ctx context.Context, t *testing.T, frame []byte) {
	t.Helper()
	select {
	case f := <-o.frame:
		if string(f) != string(frame) {
			t.Fatalf("frame %v, want %v", f, frame)
		}
	case <-ctx.Done():
		t.Fatalf("no answer: %+v", o.Result())
	}
}

// gateOf is the cluster gate of the route of a request's key (its facts,
// keys.go) whose handler forwards every request it serves.
func gateOf(c Cluster) proxy.InterceptorFunc {
	rs := &Routes{o: Options{Cluster: c}}
	return func(req *proxy.Request, out proxy.Outcome) {
		rt := route{keyFacts: keys[kmsg.Key(req.Key)]}
		rs.clusterGate(rt, handler{serve: func(_ *proxy.Request, out proxy.Outcome) { out.Forward() }}).serve(req, out)
	}
}

func heartbeatOf(group string) *kmsg.StreamsGroupHeartbeatRequest {
	r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	r.Group, r.MemberID = group, "m"
	return r
}

// A group nobody owns right now: COORDINATOR_NOT_AVAILABLE with the
// design's message; a group this instance owns: served here.
func TestClusterGateNoOwner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn := proxytest.NewConn(nil)
	res, err := proxytest.Serve(gateOf(&fakeCluster{owners: []string{""}, hops: true}), conn.Request(heartbeatOf("g"))).Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, ok := res.Response.(*kmsg.StreamsGroupHeartbeatResponse)
	if !ok || resp.ErrorCode != kerr.CoordinatorNotAvailable.Code || resp.ErrorMessage == nil ||
		*resp.ErrorMessage != "group g: no streamshift instance owns its log partition right now" {
		t.Fatalf("no owner: %+v", res)
	}
	res, err = proxytest.Serve(gateOf(&fakeCluster{owners: []string{"self"}, hops: true}), conn.Request(heartbeatOf("g"))).Wait(ctx)
	if err != nil || res.Kind != proxytest.Forwarded {
		t.Fatalf("owned here: %+v %v", res, err)
	}
}

// In a mixed release (an instance without an internal address) the
// routing is the earlier release's: a franz-go client's offsets of a group
// another instance owns are served where they arrive, a Java client's get
// NOT_COORDINATOR, and nothing hops.
func TestClusterGateMixedRelease(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fc := &fakeCluster{owners: []string{"b"}, serving: kerr.NotCoordinator}
	commit := func(conn *proxytest.Conn) proxytest.Result {
		r := kmsg.NewPtrOffsetCommitRequest()
		r.Group = "g"
		res, err := proxytest.Serve(gateOf(fc), conn.Request(r)).Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := commit(proxytest.NewConn(nil)); res.Kind != proxytest.Forwarded {
		t.Fatalf("franz-go client: %+v", res)
	}
	java := proxytest.NewConn(nil)
	java.Client.SoftwareName = "apache-kafka-java"
	if res := commit(java); res.Kind != proxytest.Responded {
		t.Fatalf("Java client: %+v", res)
	}
	if len(fc.calls) != 0 {
		t.Fatalf("hopped in a mixed release: %v", fc.calls)
	}
}

// An owner that refused the call (envelope NOT_COORDINATOR: it did
// nothing) is left for the owner the map names next; its frame is the
// client's answer. A timeout is answered COORDINATOR_NOT_AVAILABLE and
// never sent again.
func TestClusterGateReroute(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn := proxytest.NewConn(nil)
	fc := &fakeCluster{owners: []string{"b", "c"}, hops: true, frame: []byte{0, 0, 0, 1},
		answers: []error{&peer.Error{Peer: "b", Code: kerr.NotCoordinator.Code}, nil}}
	req := conn.Request(heartbeatOf("g"))
	out := &frameOutcome{Outcome: proxytest.NewOutcome(req), frame: make(chan []byte, 1)}
	go gateOf(fc)(req, out)
	out.wantFrame(ctx, t, fc.frame)
	if len(fc.calls) != 2 || fc.calls[0] != "b" || fc.calls[1] != "c" {
		t.Fatalf("calls %v, want b then c", fc.calls)
	}

	fc = &fakeCluster{owners: []string{"b", "c"}, hops: true,
		answers: []error{&peer.Error{Peer: "b", Code: kerr.RequestTimedOut.Code, Reason: "timed out"}}}
	req = conn.Request(heartbeatOf("g"))
	out = &frameOutcome{Outcome: proxytest.NewOutcome(req), frame: make(chan []byte, 1)}
	go gateOf(fc)(req, out)
	res, err := out.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, ok := res.Response.(*kmsg.StreamsGroupHeartbeatResponse)
	if !ok || resp.ErrorCode != kerr.CoordinatorNotAvailable.Code || len(fc.calls) != 1 {
		t.Fatalf("timeout: %+v, calls %v", res, fc.calls)
	}
}

// An OffsetFetch of a group nobody owns right now (its owner failing over)
// is answered NOT_COORDINATOR, at v7 and at v8 (kafka-clients 3.6):
// kafka-clients before 3.7 take COORDINATOR_NOT_AVAILABLE in an OffsetFetch
// answer for fatal, and Kafka Streams 3.6 dies of it.
func TestClusterGateNoOwnerOffsetFetch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, v := range []int16{7, 8} {
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version = v
		if v >= 8 {
			r.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g"}}
		} else {
			r.Group = "g"
		}
		res, err := proxytest.Serve(gateOf(&fakeCluster{owners: []string{""}, hops: true}), proxytest.NewConn(nil).Request(r)).Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resp, ok := res.Response.(*kmsg.OffsetFetchResponse)
		if !ok {
			t.Fatalf("v%d: %+v", v, res)
		}
		code := resp.ErrorCode
		if v >= 8 {
			if len(resp.Groups) != 1 {
				t.Fatalf("v%d: groups %+v", v, resp.Groups)
			}
			code = resp.Groups[0].ErrorCode
		}
		if code != kerr.NotCoordinator.Code {
			t.Fatalf("v%d: error %v, want NOT_COORDINATOR", v, kerr.ErrorForCode(code))
		}
	}
}
