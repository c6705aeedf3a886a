package proxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// rawConn speaks Kafka framing directly, to pipeline and to send bad bytes.
type rawConn struct {
	t testing.TB
	net.Conn
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawConn{t, c}
}

func (c *rawConn) send(corr int32, req kmsg.Request) {
	c.t.Helper()
	id := "raw"
	if _, err := c.Write(kafkaframe.AppendRequest(nil, corr, &id, req)); err != nil {
		c.t.Fatal(err)
	}
}

// recv reads one response frame.
func (c *rawConn) recv() []byte {
	c.t.Helper()
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		c.t.Fatalf("read response: %v", err)
	}
	frame := make([]byte, 4+binary.BigEndian.Uint32(size[:]))
	copy(frame, size[:])
	if _, err := io.ReadFull(c, frame[4:]); err != nil {
		c.t.Fatalf("read response: %v", err)
	}
	return frame
}

// expectClosed asserts the peer closes the connection.
func (c *rawConn) expectClosed() {
	c.t.Helper()
	var b [1]byte
	if _, err := c.Read(b[:]); err == nil {
		c.t.Fatal("connection still open")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		c.t.Fatal("connection not closed before the deadline")
	}
}

func frameCorr(frame []byte) int32 { return int32(binary.BigEndian.Uint32(frame[4:])) }

func apiVersionsReq(v int16) *kmsg.ApiVersionsRequest {
	r := kmsg.NewPtrApiVersionsRequest()
	r.Version = v
	r.ClientSoftwareName = "raw"
	r.ClientSoftwareVersion = "1"
	return r
}

func TestApiVersionsTooNew(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	p := startProxy(t, c.ListenAddrs(), nil)
	rc := dialRaw(t, p.addr)
	// A version no one knows: only the fixed header fields are meaningful.
	rc.send(7, &unknownVersion{apiVersionsReq(3), 99})
	frame := rc.recv()
	resp, err := kafkaframe.DecodeResponse(18, 0, frame[4:])
	if err != nil {
		t.Fatal(err)
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	if frameCorr(frame) != 7 || av.ErrorCode != kerr.UnsupportedVersion.Code || len(av.ApiKeys) != 1 ||
		av.ApiKeys[0].ApiKey != 18 || av.ApiKeys[0].MaxVersion != maxApiVersions {
		t.Fatalf("got corr %d %+v", frameCorr(frame), av)
	}
	// The client retries at the version offered, on the same connection.
	rc.send(8, apiVersionsReq(av.ApiKeys[0].MaxVersion))
	frame = rc.recv()
	resp, err = kafkaframe.DecodeResponse(18, av.ApiKeys[0].MaxVersion, frame[4:])
	if err != nil {
		t.Fatal(err)
	}
	if av := resp.(*kmsg.ApiVersionsResponse); av.ErrorCode != 0 || len(av.ApiKeys) < 10 {
		t.Fatalf("retry: %+v", av)
	}
}

// unknownVersion sends a request at a version kmsg itself would refuse.
type unknownVersion struct {
	kmsg.Request
	v int16
}

func (u *unknownVersion) GetVersion() int16 { return u.v }

func TestApiVersionsBrokerRejectPassesThrough(t *testing.T) {
	t.Parallel()
	c := newCluster(t, kfake.MaxVersions(kversion.V2_8_0())) // ApiVersions up to v3
	p := startProxy(t, c.ListenAddrs(), nil)
	direct := dialRaw(t, c.ListenAddrs()[0])
	direct.send(3, apiVersionsReq(4))
	want := direct.recv()
	if !isUnsupportedVersionReply(want) {
		t.Fatalf("kfake did not reject ApiVersions v4: % x", want)
	}
	rc := dialRaw(t, p.addr)
	rc.send(3, apiVersionsReq(4))
	if got := rc.recv(); !bytes.Equal(got, want) {
		t.Fatalf("proxy changed the broker's error-35 reply:\n got % x\nwant % x", got, want)
	}
}

func TestApiVersionsCaps(t *testing.T) {
	t.Parallel()
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{
		{ApiKey: 0, MinVersion: 3, MaxVersion: 99}, // Produce beyond kmsg
		{ApiKey: 1, MinVersion: 4, MaxVersion: 17}, // Fetch capped to 15
		{ApiKey: 8, MinVersion: 2, MaxVersion: 8},  // OffsetCommit, registered 9..10
		{ApiKey: 12345, MinVersion: 0, MaxVersion: 1},
		{ApiKey: 1, MinVersion: 16, MaxVersion: 17}, // nothing left after the cap
	}
	regs := []*registration{{key: 88, minVersion: 0, maxVersion: 1, advertise: true}, {key: 8, minVersion: 9, maxVersion: 10, advertise: true}}
	capApiVersions(resp, regs, nil)
	want := []kmsg.ApiVersionsResponseApiKey{
		{ApiKey: 0, MinVersion: 3, MaxVersion: kmsg.NewPtrProduceRequest().MaxVersion()},
		{ApiKey: 1, MinVersion: 4, MaxVersion: 15},
		{ApiKey: 8, MinVersion: 2, MaxVersion: 10},
		{ApiKey: 88, MinVersion: 0, MaxVersion: 1},
	}
	if len(resp.ApiKeys) != len(want) {
		t.Fatalf("got %+v", resp.ApiKeys)
	}
	for i := range want {
		g := resp.ApiKeys[i]
		if g.ApiKey != want[i].ApiKey || g.MinVersion != want[i].MinVersion || g.MaxVersion != want[i].MaxVersion {
			t.Errorf("key %d: got %+v want %+v", i, resp.ApiKeys[i], want[i])
		}
	}
}

// slowHeartbeat answers after a delay that decreases, so a ring that wrote
// responses in completion order would reorder them.
type slowHeartbeat struct {
	delay time.Duration
	// reached, if set, is closed when the first request reaches Intercept.
	reached chan struct{}
	once    sync.Once
}

func (s *slowHeartbeat) Intercept(req *Request, out Outcome) {
	if s.reached != nil {
		s.once.Do(func() { close(s.reached) })
	}
	d := s.delay
	go func() {
		time.Sleep(d)
		resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
		resp.MemberEpoch = req.CorrelationID
		out.Respond(resp)
	}()
}

func TestPipelinedResponsesInOrder(t *testing.T) {
	t.Parallel()
	checkPipelined(t, &slowHeartbeat{delay: 50 * time.Millisecond}, func(corr int32, hbr *kmsg.StreamsGroupHeartbeatResponse) {
		if hbr.MemberEpoch != corr {
			t.Fatalf("heartbeat answer %d for request %d", hbr.MemberEpoch, corr)
		}
	})
}

// checkPipelined sends Metadata, ApiVersions and StreamsGroupHeartbeat
// (of group "p", served by i) pipelined in one write and checks the
// answers come back in request order; check looks at each heartbeat's.
func checkPipelined(t *testing.T, i Interceptor, check func(corr int32, hbr *kmsg.StreamsGroupHeartbeatResponse)) {
	c := newCluster(t, kfake.SeedTopics(1, "p"))
	p := startProxy(t, c.ListenAddrs(), nil)
	if err := p.Register(int16(kmsg.StreamsGroupHeartbeat), 0, 1, true, i); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, p.NodeAddr(0))
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	hb.Version = 1
	hb.Group = "p"
	var batch []byte
	id := "raw"
	kinds := map[int32]int16{}
	for corr := int32(1); corr <= 12; corr++ {
		var req kmsg.Request = md
		switch corr % 3 {
		case 1:
			req = hb
		case 2:
			req = apiVersionsReq(3)
		}
		kinds[corr] = req.Key()
		batch = kafkaframe.AppendRequest(batch, corr, &id, req)
	}
	if _, err := rc.Write(batch); err != nil { // all pipelined in one write
		t.Fatal(err)
	}
	for corr := int32(1); corr <= 12; corr++ {
		frame := rc.recv()
		if got := frameCorr(frame); got != corr {
			t.Fatalf("response %d has correlation id %d", corr, got)
		}
		key := kinds[corr]
		version := map[int16]int16{3: 9, 18: 3, 88: 1}[key]
		resp, err := kafkaframe.DecodeResponse(key, version, frame[4:])
		if err != nil {
			t.Fatalf("response %d (%s): %v", corr, kmsg.NameForKey(key), err)
		}
		if hbr, ok := resp.(*kmsg.StreamsGroupHeartbeatResponse); ok {
			check(corr, hbr)
		}
	}
}

func TestBadFramesCloseTheConnection(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	p := startProxy(t, c.ListenAddrs(), func(o *Options) { o.MaxFrameBytes = 4096 })
	if err := p.Register(int16(kmsg.StreamsGroupHeartbeat), 0, 1, true, &slowHeartbeat{}); err != nil {
		t.Fatal(err)
	}
	hbTruncated := kafkaframe.AppendRequest(nil, 1, nil, &kmsg.StreamsGroupHeartbeatRequest{Version: 1, Group: "g"})
	hbTruncated = hbTruncated[:len(hbTruncated)-6]
	binary.BigEndian.PutUint32(hbTruncated, uint32(len(hbTruncated)-4))
	produceTruncated := []byte{0, 0, 0, 10, 0, 0, 0, 9, 0, 0, 0, 1, 0xff, 0xff}
	for name, b := range map[string][]byte{
		"negative size":       {0xff, 0xff, 0xff, 0xff},
		"too small":           {0, 0, 0, 4, 0, 18, 0, 0},
		"above max":           {0, 0, 0x10, 1, 0, 18, 0, 0, 0, 0, 0, 1},
		"truncated intercept": hbTruncated,
		"truncated produce":   produceTruncated,
	} {
		t.Run(name, func(t *testing.T) {
			rc := dialRaw(t, p.addr)
			if _, err := rc.Write(b); err != nil {
				t.Fatal(err)
			}
			rc.expectClosed()
		})
	}
	// The proxy still serves.
	rc := dialRaw(t, p.addr)
	rc.send(1, apiVersionsReq(3))
	if frameCorr(rc.recv()) != 1 {
		t.Fatal("bad correlation id")
	}
}

func TestUpstreamUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	p := startProxy(t, []string{dead}, nil)
	if p.Ready() {
		t.Error("ready without upstream metadata")
	}
	rc := dialRaw(t, p.addr)
	rc.send(1, apiVersionsReq(3))
	rc.expectClosed()
	// A node port whose node the proxy cannot learn closes too.
	rc = dialRaw(t, p.NodeAddr(0))
	rc.expectClosed()
}

func TestNodeOutsidePortRange(t *testing.T) {
	t.Parallel()
	c := newCluster(t) // nodes 0..2
	p, err := New(Options{Upstream: c.ListenAddrs(), Listen: "127.0.0.1:1", NodePortBase: 2, NodeIDMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "upstream node 2") {
		t.Fatalf("Run: %v, want an error naming node 2", err)
	}

	// A configured 0..0 is node 0 alone, not an unset range.
	p1, err := New(Options{Upstream: c.ListenAddrs(), Listen: "127.0.0.1:1", NodePortBase: 2, NodeIDMin: 0, NodeIDMax: 0})
	if err != nil {
		t.Fatal(err)
	}
	// Bounded: a proxy that took 0..0 as unset would serve until cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Nodes 1 and 2 are both outside; the error names whichever it met first.
	if err := p1.Run(ctx); err == nil || !strings.Contains(err.Error(), "is outside node ids 0..0") {
		t.Fatalf("Run with node ids 0..0: %v, want an error naming a node outside 0..0", err)
	}

	// At runtime a new node outside the range is hidden, never leaked.
	p2 := startProxy(t, c.ListenAddrs(), func(o *Options) { o.NodeIDMax = 3 })
	if _, _, err := c.AddNode(9, 0); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, p2.addr)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	rc.send(1, md)
	resp, err := kafkaframe.DecodeResponse(3, 9, rc.recv()[4:])
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range resp.(*kmsg.MetadataResponse).Brokers {
		if b.NodeID == 9 || b.Host != "127.0.0.1" || b.Port != int32(p2.opts.NodePortBase)+b.NodeID {
			t.Errorf("broker %+v", b)
		}
	}
}

func TestDrainAnswersInFlight(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	p := startProxy(t, c.ListenAddrs(), nil)
	hb := &slowHeartbeat{delay: 300 * time.Millisecond, reached: make(chan struct{})}
	if err := p.Register(int16(kmsg.StreamsGroupHeartbeat), 0, 1, true, hb); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, p.addr)
	rc.send(5, &kmsg.StreamsGroupHeartbeatRequest{Version: 1, Group: "g"})
	<-hb.reached // the request is in flight: the drain must wait for its answer
	go p.stop()
	if frameCorr(rc.recv()) != 5 {
		t.Fatal("bad correlation id")
	}
	rc.expectClosed()
}

type recordingTap struct {
	mu sync.Mutex
	ex []*Exchange
	// only, if set, are the keys wanted.
	only []int16
}

func (r *recordingTap) Wants(key int16) bool { return r.only == nil || slices.Contains(r.only, key) }

func (r *recordingTap) Exchange(e *Exchange) {
	r.mu.Lock()
	r.ex = append(r.ex, e)
	r.mu.Unlock()
}

func TestTapSeesExchanges(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	tap := &recordingTap{}
	p := startProxy(t, c.ListenAddrs(), func(o *Options) { o.Tap = tap })
	rc := dialRaw(t, p.addr)
	rc.send(1, apiVersionsReq(3))
	rc.recv()
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	rc.send(2, md)
	sent := rc.recv()
	rc.send(3, &unknownVersion{apiVersionsReq(3), 99})
	rc.recv()
	tap.mu.Lock()
	defer tap.mu.Unlock()
	if len(tap.ex) != 3 {
		t.Fatalf("%d exchanges", len(tap.ex))
	}
	for i, e := range tap.ex {
		_, _, reqCorr := kafkaframe.FixedHeader(e.Request[4:])
		if e.CorrelationID != int32(i+1) || reqCorr != int32(i+1) || frameCorr(e.Response) != int32(i+1) {
			t.Errorf("exchange %d: %+v", i, e)
		}
	}
	if !bytes.Equal(tap.ex[1].Response, sent) || tap.ex[1].Key != 3 || tap.ex[1].Version != 9 || tap.ex[1].Local {
		t.Errorf("metadata exchange %+v", tap.ex[1])
	}
	if !tap.ex[2].Local {
		t.Error("too-new ApiVersions not marked local")
	}
	for i, e := range tap.ex {
		if e.Received.IsZero() || e.At.Before(e.Received) {
			t.Errorf("exchange %d: received %v, answered %v", i, e.Received, e.At)
		}
	}
}

// TestTapOnlyWantedKeys: a key the tap does not want is neither copied nor
// handed over.
func TestTapOnlyWantedKeys(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	tap := &recordingTap{only: []int16{int16(kmsg.ApiVersions)}}
	p := startProxy(t, c.ListenAddrs(), func(o *Options) { o.Tap = tap })
	rc := dialRaw(t, p.addr)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	rc.send(1, md)
	rc.recv()
	rc.send(2, apiVersionsReq(3))
	rc.recv()
	tap.mu.Lock()
	defer tap.mu.Unlock()
	if len(tap.ex) != 1 || tap.ex[0].Key != int16(kmsg.ApiVersions) {
		t.Fatalf("exchanges %+v, want the ApiVersions one only", tap.ex)
	}
}
