package proxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// A serve call carries the client's own bytes: a request a hop took
// undecoded (it never decodes at the origin), and a decoded one too, so
// the owner reads exactly what the client sent (a group that is not UTF-8
// included, which the origin's decoding would have rewritten).
func TestServeCallCarriesClientBytes(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "open"))
	rp := startRemotePair(t, c, nil)
	var decodedAtHop atomic.Bool
	err := rp.origin.RegisterHop(int16(kmsg.StreamsGroupHeartbeat), func(req *Request, out Outcome) bool {
		decodedAtHop.Store(req.Body != nil)
		data, err := rp.origin.ServeRemote(context.Background(), rp.link, req, 0, 0, 0)
		if err != nil {
			t.Errorf("serve call: %v", err)
		}
		out.(FrameResponder).RespondFrame(data)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	cid := "app"
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.Generation = 8, "g\xff", -1
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "open", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5}}}}
	for _, req := range []kmsg.Request{&kmsg.StreamsGroupHeartbeatRequest{Version: 0, Group: "open"}, oc} {
		frame := kafkaframe.AppendRequest(nil, 41, &cid, req)
		direct := oneRoundTrip(t, rp.owner.addr, frame)
		hopped := oneRoundTrip(t, rp.origin.addr, frame)
		if !bytes.Equal(direct, hopped) {
			t.Fatalf("%s: through the origin\n%x\nat the owner\n%x", kmsg.NameForKey(req.Key()), hopped, direct)
		}
		if got := <-rp.served; !bytes.Equal(got, frame[4:]) {
			t.Errorf("%s: the owner read\n%x\nthe client sent\n%x", kmsg.NameForKey(req.Key()), got, frame[4:])
		}
	}
	if decodedAtHop.Load() {
		t.Error("the hop saw a decoded heartbeat")
	}
}

// A request of a key with a hop is decoded off the loop, after the hop left
// it: a body that does not decode then closes the connection as one the
// loop decodes does ("malformed body"), and its interceptor never sees it.
func TestHopMalformedBodyCloses(t *testing.T) {
	t.Parallel()
	c := newCluster(t, kfake.NumBrokers(1))
	p := startProxy(t, c.ListenAddrs(), nil)
	var intercepted atomic.Int32
	if err := p.Register(int16(kmsg.Heartbeat), 0, 4, false, InterceptorFunc(func(_ *Request, out Outcome) {
		intercepted.Add(1)
		out.Forward()
	})); err != nil {
		t.Fatal(err)
	}
	var hopped atomic.Int32
	if err := p.RegisterHop(int16(kmsg.Heartbeat), func(*Request, Outcome) bool { hopped.Add(1); return false }); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "proxy ready", func() error {
		if !p.Ready() {
			return errNotYet
		}
		return nil
	})
	id := "raw"
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID = 4, "g", "m"
	frame := kafkaframe.AppendRequest(nil, 1, &id, hb)
	frame = frame[:len(frame)-3] // the member id and the tags cut
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	rc := dialRaw(t, p.NodeAddr(0))
	if _, err := rc.Write(frame); err != nil {
		t.Fatal(err)
	}
	rc.expectClosed()
	if hopped.Load() != 1 || intercepted.Load() != 0 {
		t.Fatalf("hop saw %d, interceptor %d; want 1 and 0", hopped.Load(), intercepted.Load())
	}
	if got := counterValue(t, p.m.frameRejected.WithLabelValues("malformed body")); got != 1 {
		t.Fatalf("malformed bodies counted %v, want 1", got)
	}
}
