package proxy

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/streamshift/streamshift/internal/kafkaframe"
	"github.com/streamshift/streamshift/proxy/peer"
)

// remotePair is two proxies in front of one cluster, linked: the origin
// carries the keys the owner serves to the owner (a serve call), as the
// routes will for a group another instance owns.
type remotePair struct {
	origin, owner *testProxy
	// served has the request bytes of each serve call the owner took.
	served chan []byte
	// link is the origin's link to the owner.
	link *peer.Link
}

// rewritingCommit rewrites an OffsetCommit (every offset +1000, forwarded
// on the client's own connection) and marks the broker's answer
// (ThrottleMillis 7), as the routes rewrite commits to the anchor member.
type rewritingCommit struct{}

func (rewritingCommit) Intercept(req *Request, out Outcome) {
	oc := req.Body.(*kmsg.OffsetCommitRequest)
	for i := range oc.Topics {
		for j := range oc.Topics[i].Partitions {
			oc.Topics[i].Partitions[j].Offset += 1000
		}
	}
	out.ForwardRewritten(oc, req.Version, func(r kmsg.Response) kmsg.Response {
		r.(*kmsg.OffsetCommitResponse).ThrottleMillis = 7
		return r
	})
}

// ownerKeys are the owner's interceptors: an ask then Respond, a plain
// Forward, and a ForwardRewritten.
var ownerKeys = []struct {
	key      kmsg.Key
	min, max int16
	i        Interceptor
}{
	{kmsg.StreamsGroupHeartbeat, 0, 0, askingHeartbeat{}},
	{kmsg.DescribeGroups, 0, 5, InterceptorFunc(func(_ *Request, out Outcome) { out.Forward() })},
	{kmsg.OffsetCommit, 0, 9, rewritingCommit{}},
}

// startRemotePair starts both proxies, their internal listeners and links;
// on the origin the owner's keys go to the owner.
func startRemotePair(t *testing.T, c *kfake.Cluster, tweak func(*Options)) *remotePair {
	t.Helper()
	rp := &remotePair{owner: startProxy(t, c.ListenAddrs(), tweak), origin: startProxy(t, c.ListenAddrs(), tweak), served: make(chan []byte, 16)}
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	links := map[string]*peer.Links{}
	addrs := map[string]string{}
	for id, p := range map[string]*Proxy{"origin": rp.origin.Proxy, "owner": rp.owner.Proxy} {
		links[id] = peer.NewLinks(peer.LinkOptions{Self: id, Log: log})
		t.Cleanup(links[id].Close)
		handlers := p.PeerHandlers(id, links[id])
		if id == "owner" {
			serve := handlers[peer.KindServe]
			handlers[peer.KindServe] = func(ctx context.Context, c *peer.Call) <-chan peer.Answer {
				select {
				case rp.served <- append([]byte(nil), c.RequestData...):
				default:
				}
				return serve(ctx, c)
			}
		}
		pl, err := peer.Listen(peer.ListenerOptions{Addr: "127.0.0.1:0", Handlers: handlers, Log: log})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pl.Close() })
		addrs[id] = pl.Addr().String()
	}
	links["origin"].Update(map[string]string{"owner": addrs["owner"]})
	links["owner"].Update(map[string]string{"origin": addrs["origin"]})
	rp.link = links["origin"].Link("owner")
	toOwner := InterceptorFunc(func(req *Request, out Outcome) {
		data, err := rp.origin.ServeRemote(context.Background(), links["origin"].Link("owner"), req, 0, 0, 0)
		if err != nil {
			t.Errorf("serve call for %s: %v", kmsg.NameForKey(req.Key), err)
		}
		out.(FrameResponder).RespondFrame(data) // nil closes the client
	})
	for _, r := range ownerKeys {
		if err := rp.owner.Register(int16(r.key), r.min, r.max, true, r.i); err != nil {
			t.Fatal(err)
		}
		if err := rp.origin.Register(int16(r.key), r.min, r.max, true, toOwner); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "links up", func() error {
		if !links["origin"].Link("owner").Up() || !links["owner"].Link("origin").Up() {
			return errNotYet
		}
		return nil
	})
	return rp
}

// oneRoundTrip sends one request frame on a fresh connection and returns the
// response frame.
func oneRoundTrip(t *testing.T, addr string, frame []byte) []byte {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write(frame); err != nil {
		t.Fatal(err)
	}
	msg, err := kafkaframe.Read(conn, 1<<20)
	if err != nil {
		t.Fatalf("response from %s: %v", addr, err)
	}
	return msg
}

// TestForwardedByteForByte: a request served by the owner directly and the
// same request through the origin (a serve call; the owner's asks and
// forwards go back to run on the client's connection at the origin) get
// equal bytes: Respond after an ask, an untouched Forward, and a
// ForwardRewritten whose answer the owner's onResponse changes.
func TestForwardedByteForByte(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "open"))
	rp := startRemotePair(t, c, nil)
	cid := "app"
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.Generation = 8, "g", -1
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "open", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5}}}}
	for _, req := range []kmsg.Request{
		&kmsg.StreamsGroupHeartbeatRequest{Version: 0, Group: "open"},
		&kmsg.DescribeGroupsRequest{Version: 5, Groups: []string{"g"}},
		oc,
	} {
		frame := kafkaframe.AppendRequest(nil, 41, &cid, req)
		direct := oneRoundTrip(t, rp.owner.addr, frame)
		hopped := oneRoundTrip(t, rp.origin.addr, frame)
		if !bytes.Equal(direct, hopped) {
			t.Fatalf("%s: through the origin\n%x\nat the owner\n%x", kmsg.NameForKey(req.Key()), hopped, direct)
		}
		resp, err := kafkaframe.DecodeResponse(req.Key(), req.GetVersion(), hopped)
		if err != nil {
			t.Fatal(err)
		}
		// The answers are the interceptors' (not a plain forward).
		switch r := resp.(type) {
		case *kmsg.StreamsGroupHeartbeatResponse:
			if deref(r.ErrorMessage) != "open=0" || r.MemberEpoch != 41 {
				t.Fatalf("heartbeat answered %+v", r)
			}
		case *kmsg.OffsetCommitResponse:
			if r.ThrottleMillis != 7 || r.Topics[0].Partitions[0].ErrorCode != 0 {
				t.Fatalf("commit answered %+v", r)
			}
		}
	}
	// The rewritten commit reached the broker.
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Group = "g"
	of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "open", Partitions: []int32{0}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ofr, err := of.RequestWith(ctx, cl)
	if err != nil || len(ofr.Topics) != 1 || ofr.Topics[0].Partitions[0].Offset != 1005 {
		t.Fatalf("committed offset: %+v %v, want 1005", ofr, err)
	}
}

// TestRemoteForClientsPrincipal: what the owner does for a client of the
// origin runs on that client's own upstream connection, so the broker
// (kfake with SASL and ACLs) decides for alice, not for the owner's
// superuser control plane: the owner's ask sees alice's DESCRIBE rights,
// and the rewritten commit to a group alice may not read gets
// GROUP_AUTHORIZATION_FAILED through the origin.
func TestRemoteForClientsPrincipal(t *testing.T) {
	allow := func(rt kmsg.ACLResourceType, name string, op kmsg.ACLOperation) kfake.ACL {
		return kfake.ACL{Resource: rt, Name: name, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: op, Allow: true}
	}
	c := newCluster(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "open", "secret"), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("PLAIN", "admin", "admin"),
		kfake.User("PLAIN", "alice", "alice",
			allow(kmsg.ACLResourceTypeTopic, "open", kmsg.ACLOperationDescribe),
			allow(kmsg.ACLResourceTypeTopic, "open", kmsg.ACLOperationRead),
			allow(kmsg.ACLResourceTypeGroup, "open-g", kmsg.ACLOperationRead),
			// secret-g: alice finds its coordinator, may not commit.
			allow(kmsg.ACLResourceTypeGroup, "secret-g", kmsg.ACLOperationDescribe)))
	rp := startRemotePair(t, c, func(o *Options) {
		o.ControlPlane = []kgo.Opt{kgo.SASL(plain.Auth{User: "admin", Pass: "admin"}.AsMechanism())}
	})
	var w addrWatch
	alice := kgo.SASL(plain.Auth{User: "alice", Pass: "alice"}.AsMechanism())
	cl := newClient(t, rp.origin, &w, alice)
	// Kafka 3.9's versions: OffsetCommit v9, the highest the owner
	// intercepts (v10 names topics by id).
	cl39 := newClient(t, rp.origin, &w, alice, kgo.MaxVersions(kversion.V3_9_0()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	hb.Group = "open,secret"
	hbr, err := hb.RequestWith(ctx, cl.Broker(0))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("open=0,secret=%d", kerr.TopicAuthorizationFailed.Code); deref(hbr.ErrorMessage) != want {
		t.Fatalf("the owner's ask through the origin was answered %q, want %q (alice's rights)", deref(hbr.ErrorMessage), want)
	}
	for group, want := range map[string]int16{"open-g": 0, "secret-g": kerr.GroupAuthorizationFailed.Code} {
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Group, oc.Generation = group, -1
		oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "open", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
		ocr, err := oc.RequestWith(ctx, cl39)
		if err != nil {
			t.Fatal(err)
		}
		if got := ocr.Topics[0].Partitions[0].ErrorCode; got != want || ocr.ThrottleMillis != 7 {
			t.Errorf("commit to %s through the origin: code %d, throttle %d; want %d, the owner's rewrite", group, got, ocr.ThrottleMillis, want)
		}
	}
}

// TestRemoteClientGone: an upstream call naming a connection the origin
// does not have (closed, of an earlier start, of another instance) is
// answered NETWORK_EXCEPTION, nothing sent; one naming a live connection
// is answered by the broker, under the call's correlation id.
func TestRemoteClientGone(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(1))
	p := startProxy(t, c.ListenAddrs(), nil)
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var live uint64
	waitFor(t, "client connection with its upstream", func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		for id := range p.byID {
			live = id
			return nil
		}
		return errNotYet
	})
	h := p.PeerHandlers("origin", nil)[peer.KindUpstream]
	cid := "app"
	data := kafkaframe.AppendRequest(nil, 77, &cid, &kmsg.MetadataRequest{Version: 9})[4:]
	for name, tc := range map[string]struct {
		pr   peer.ConnPrincipal
		code int16
	}{
		"live":               {peer.ConnPrincipal{Kind: peer.KindUpstream, Origin: "origin", Incarnation: p.Incarnation(), ConnID: int64(live)}, 0},
		"unknown connection": {peer.ConnPrincipal{Kind: peer.KindUpstream, Origin: "origin", Incarnation: p.Incarnation(), ConnID: 1 << 40}, kerr.NetworkException.Code},
		"earlier start":      {peer.ConnPrincipal{Kind: peer.KindUpstream, Origin: "origin", Incarnation: p.Incarnation() + 1, ConnID: int64(live)}, kerr.NetworkException.Code},
		"another origin":     {peer.ConnPrincipal{Kind: peer.KindUpstream, Origin: "other", Incarnation: p.Incarnation(), ConnID: int64(live)}, kerr.NetworkException.Code},
	} {
		var a peer.Answer
		waitFor(t, name, func() error {
			a = <-h(context.Background(), &peer.Call{Principal: tc.pr, RequestData: data, Key: int16(kmsg.Metadata), Version: 9, Corr: 77})
			if tc.code == 0 && a.Code == kerr.NetworkException.Code {
				return errNotYet // the upstream connection is still being dialled
			}
			return nil
		})
		if a.Code != tc.code {
			t.Errorf("%s: code %d, want %d", name, a.Code, tc.code)
			continue
		}
		if tc.code == 0 {
			if _, err := kafkaframe.DecodeResponse(int16(kmsg.Metadata), 9, a.Data); err != nil || len(a.Data) < 4 || a.Data[3] != 77 {
				t.Errorf("%s: answer %x (%v), want a Metadata response of correlation id 77", name, a.Data, err)
			}
		}
	}
}
