package route

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkautf8"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/proxy/peer"
	"github.com/streamshift/streamshift/proxy/proxytest"
)

// hopOf is the hop of the route of a request's key (hop.go), whose routed
// handler forwards every request it serves.
func hopOf(c Cluster) proxy.Hop {
	rs := &Routes{o: Options{Cluster: c}}
	return func(req *proxy.Request, out proxy.Outcome) bool {
		rt := route{keyFacts: keys[kmsg.Key(req.Key)]}
		return rs.hopUndecoded(rt, func(_ *proxy.Request, out proxy.Outcome) { out.Forward() })(req, out)
	}
}

// hopRequests builds a request of every hop key naming group.
var hopRequests = map[kmsg.Key]func(group string) kmsg.Request{
	kmsg.OffsetCommit: func(g string) kmsg.Request { r := kmsg.NewPtrOffsetCommitRequest(); r.Group = g; return r },
	kmsg.Heartbeat:    func(g string) kmsg.Request { r := kmsg.NewPtrHeartbeatRequest(); r.Group = g; return r },
	kmsg.LeaveGroup:   func(g string) kmsg.Request { r := kmsg.NewPtrLeaveGroupRequest(); r.Group = g; return r },
	kmsg.SyncGroup:    func(g string) kmsg.Request { r := kmsg.NewPtrSyncGroupRequest(); r.Group = g; return r },
	kmsg.StreamsGroupHeartbeat: func(g string) kmsg.Request {
		return heartbeatOf(g)
	},
}

// The group a hop reads from the bytes is the one the gate routes the
// decoded request by, at every version of every hop key, a group that is
// not UTF-8 included (read as Kafka reads it): a hop that read another
// group would send the request to an instance that does not own it.
func TestHopReadsTheGatesGroup(t *testing.T) {
	for k := range hopKeys {
		build, ok := hopRequests[k]
		f := keys[k]
		if !ok || f.group == nil || f.split != nil || f.anyInstance {
			t.Errorf("hop key %s: want a gated key of one group with a request here", k.Name())
			continue
		}
		for v := int16(0); v <= build("").MaxVersion(); v++ {
			for _, group := range []string{"word-count", "g\xff\xfe-ü"} {
				body := build(group)
				body.SetVersion(v)
				req := proxytest.NewConn(nil).UndecodedRequest(body)
				got, ok := leadingGroup(req.Key, req.Version, req.RawBody())
				if err := req.Decode(); err != nil {
					t.Fatalf("%s v%d: %v", k.Name(), v, err)
				}
				want, _ := f.group(req.Body)
				if !ok || got != want {
					t.Errorf("%s v%d: the hop reads group %q (%v), the gate routes by %q", k.Name(), v, got, ok, want)
				}
			}
		}
	}
	for _, rt := range (&Routes{o: Options{Cluster: &fakeCluster{}}}).table() {
		if hopKeys[rt.key] && rt.around != nil {
			t.Errorf("hop key %s has a row wrapped before its gate, which a hop would skip", rt.key.Name())
		}
	}
}

// At an instance that does not own the group, a request of a hop key goes
// to the owner undecoded and the owner's frame is the client's answer; a
// group owned here, or by nobody, is left to the route (decoded).
func TestHopForwardsUndecoded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn := proxytest.NewConn(nil)
	fc := &fakeCluster{owners: []string{"b"}, hops: true, frame: []byte{0, 0, 0, 1}, answers: []error{nil}}
	req := conn.UndecodedRequest(heartbeatOf("g"))
	out := &frameOutcome{Outcome: proxytest.NewOutcome(req), frame: make(chan []byte, 1)}
	if !hopOf(fc)(req, out) {
		t.Fatal("a request of a group another instance owns was left to the route")
	}
	out.wantFrame(ctx, t, fc.frame)
	if len(fc.undecoded) != 1 || !fc.undecoded[0] || req.Body != nil {
		t.Fatalf("forwarded decoded: %v, body %v", fc.undecoded, req.Body)
	}
	for _, owner := range []string{"self", ""} {
		fc := &fakeCluster{owners: []string{owner}, hops: true}
		req := conn.UndecodedRequest(heartbeatOf("g"))
		if hopOf(fc)(req, &frameOutcome{Outcome: proxytest.NewOutcome(req)}) || len(fc.calls) != 0 {
			t.Errorf("owner %q: the hop took the request (calls %v)", owner, fc.calls)
		}
	}
	mixed := &fakeCluster{owners: []string{"b"}}
	req = conn.UndecodedRequest(heartbeatOf("g"))
	if hopOf(mixed)(req, &frameOutcome{Outcome: proxytest.NewOutcome(req)}) {
		t.Error("a mixed release (no hops) hopped")
	}
}

// A hopped request the owner could not serve gets its key's refusal,
// decoded then; one whose body does not decode closes the connection (the
// proxy's answer to a malformed body) and is not answered.
func TestHopRefusalDecodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn := proxytest.NewConn(nil)
	timedOut := &peer.Error{Peer: "b", Code: kerr.RequestTimedOut.Code, Reason: "timed out"}
	fc := &fakeCluster{owners: []string{"b"}, hops: true, answers: []error{timedOut}}
	req := conn.UndecodedRequest(heartbeatOf("g"))
	out := &frameOutcome{Outcome: proxytest.NewOutcome(req), frame: make(chan []byte, 1)}
	if !hopOf(fc)(req, out) {
		t.Fatal("not hopped")
	}
	res, err := out.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if resp, ok := res.Response.(*kmsg.StreamsGroupHeartbeatResponse); !ok || resp.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("refusal %+v", res)
	}

	// The group, then bytes no heartbeat has: the hop reads the group, the
	// refusal cannot decode the rest.
	fc = &fakeCluster{owners: []string{"b"}, hops: true, answers: []error{timedOut}}
	good := conn.UndecodedRequest(heartbeatOf("g"))
	frame := append([]byte(nil), good.RawBody()[:2]...) // compact "g"
	frame = append(frame, 0xff, 0xff, 0xff)
	cut := conn.UndecodedRequest(heartbeatOf("g"))
	raw := cut.RawBody()
	copy(raw, frame)
	out = &frameOutcome{Outcome: proxytest.NewOutcome(cut), frame: make(chan []byte, 1)}
	if !hopOf(fc)(cut, out) {
		t.Fatal("not hopped")
	}
	if !conn.Malformed() || out.Result().Kind != proxytest.Pending {
		t.Fatalf("malformed body: malformed %v, outcome %+v", conn.Malformed(), out.Result())
	}
}

// Whatever the bytes, reading the group never panics, and a body that
// decodes routes by the group the hop read from it.
func FuzzLeadingGroup(f *testing.F) {
	for k, build := range hopRequests {
		for _, v := range []int16{0, build("").MaxVersion()} {
			body := build("word-count")
			body.SetVersion(v)
			f.Add(int16(k), v, proxytest.NewConn(nil).UndecodedRequest(body).RawBody())
		}
	}
	f.Fuzz(func(t *testing.T, key, version int16, body []byte) {
		group, ok := leadingGroup(key, version, body)
		req := kmsg.RequestForKey(key)
		if !hopKeys[kmsg.Key(key)] || req == nil || version < 0 || version > req.MaxVersion() {
			return
		}
		req.SetVersion(version)
		if req.ReadFrom(body) != nil {
			return
		}
		if want, _ := keys[kmsg.Key(key)].group(req); want != "" && (!ok || kafkautf8.Decode(want) != group) {
			t.Fatalf("%s v%d: read %q, decoded %q", kmsg.NameForKey(key), version, group, want)
		}
	})
}
