package proxy

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// silentBroker answers the proxy's control plane (a connection that starts
// with ApiVersions, as kgo's do) and never reads a proxied connection past
// its first request: requests forwarded to it stay in the kernel's buffers
// and the rest stays in the proxy.
func silentBroker(t *testing.T) *fakeBroker {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	return startFakeBroker(t, func(b *fakeBroker, c net.Conn) {
		h, _, err := readRequest(c, nil)
		if err != nil {
			return
		}
		if h.Key != int16(kmsg.ApiVersions) {
			<-stop // a proxied connection: open and unread until the test ends
			return
		}
		if _, err := c.Write(b.controlPlaneAnswer(h)); err != nil {
			return
		}
		serveControl(b, c)
	})
}

// serveControl answers ApiVersions and Metadata only.
func serveControl(b *fakeBroker, c net.Conn) {
	var msg []byte
	for {
		h, m, err := readRequest(c, msg)
		if err != nil {
			return
		}
		msg = m
		out := b.controlPlaneAnswer(h)
		if out == nil {
			return
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// metadataBatch is size bytes of pipelined Metadata v9 requests (whole
// frames) and the length of one frame.
func metadataBatch(size int) ([]byte, int) {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 9
	id := "pipeliner"
	frame := kafkaframe.AppendRequest(nil, 1, &id, req)
	var b []byte
	for len(b)+len(frame) <= size {
		b = append(b, frame...)
	}
	return b, len(frame)
}

// TestConnectionMemoryBound: connections pipelining requests the proxy cannot
// forward (the broker reads nothing) and never reading make the proxy hold
// their bytes; the heap they cost must be the bytes held, not a multiple of
// it. gnet's inbound ring grew through power-of-two pool buffers and kept
// the outgrown ones: 4 such connections holding 108 MiB each took 1.6 GiB.
func TestConnectionMemoryBound(t *testing.T) {
	// Not parallel: it measures the process's heap, which other tests would grow.
	const conns, maxFrame, hw, send = 4, 16 << 20, 1 << 20, 12 << 20
	up := silentBroker(t)
	p := startProxy(t, []string{up.addr()}, func(o *Options) {
		o.MaxFrameBytes = maxFrame
		o.BufferHighWater = hw
		o.MaxBufferedBytes = 1 << 30
	})
	batch, frameLen := metadataBatch(send)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < conns; i++ {
		c := dialRaw(t, p.addr)
		go func() { _, _ = c.Write(batch) }() // the proxy takes it all; nothing is read back
	}
	// Everything sent is held but the requests forwarded before the
	// in-flight cap (the kernel takes those).
	want := int64(conns * (len(batch) - p.opts.MaxInflight*frameLen))
	waitFor(t, "the proxy holding the pipelined requests", func() error {
		if got := p.mem.total.Load(); got < want {
			return fmtErr("held %d bytes, want at least %d", got, want)
		}
		return nil
	})
	runtime.GC() // garbage goes; what gnet's pools keep survives one collection
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	held := p.mem.total.Load()
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("held %d MiB for %d connections, heap grew %d MiB", held>>20, conns, grown>>20)
	if perConn := held / conns; perConn > maxFrame+2*hw {
		t.Errorf("a connection holds %d bytes, above the stated bound %d", perConn, maxFrame+2*hw)
	}
	// The bytes held plus an eighth for allocation size classes and the
	// test's own garbage.
	if grown > held+held/8 {
		t.Errorf("heap grew %d MiB while the proxy holds %d MiB of requests", grown>>20, held>>20)
	}
}

// TestInterceptedSizePrefixRefused: a request of an intercepted key is
// decoded whole, so one over MaxInterceptedBytes is refused from its size
// prefix, before its body is buffered.
func TestInterceptedSizePrefixRefused(t *testing.T) {
	t.Parallel()
	up := startFakeBroker(t, serveControl)
	p := startProxy(t, []string{up.addr()}, nil)
	if err := p.Register(int16(kmsg.JoinGroup), 0, 9, false, InterceptorFunc(func(*Request, Outcome) {
		t.Error("interceptor called for a request over the limit")
	})); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, p.addr)
	var head [12]byte
	binary.BigEndian.PutUint32(head[:], 100<<20)
	binary.BigEndian.PutUint16(head[4:], uint16(kmsg.JoinGroup))
	binary.BigEndian.PutUint16(head[6:], 5)
	binary.BigEndian.PutUint32(head[8:], 1)
	if _, err := c.Write(head[:]); err != nil {
		t.Fatal(err)
	}
	// 40 MiB of the body follow, as the report's client sent; the proxy
	// must close the connection before taking them.
	chunk := make([]byte, 256<<10)
	sent, refused := 0, false
	for sent < 40<<20 {
		_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(chunk); err != nil {
			refused = true
			break
		}
		sent += len(chunk)
	}
	if !refused {
		c.expectClosed()
	}
	if got := counterValue(t, p.m.frameRejected.WithLabelValues("locally handled request over max-intercepted-bytes")); got != 1 {
		t.Errorf("refusals counted: %v, want 1", got)
	}
	if peak := p.mem.peak.Load(); peak > 2<<20 {
		t.Errorf("the proxy held up to %d bytes of a request it refuses from its prefix", peak)
	}
}

// TestMemoryBudget: connections that pipeline without reading (each up to
// its own cap) and one that stalls mid-frame together want more than the
// budget; the proxy closes the biggest holders, the held total never passes
// the budget by more than a read per event loop, and a well-behaved client
// keeps getting its answers throughout.
func TestMemoryBudget(t *testing.T) {
	t.Parallel()
	const budget, maxFrame, hw = 12 << 20, 8 << 20, 256 << 10
	up := startFakeBroker(t, serveEcho)
	p := startProxy(t, []string{up.addr()}, func(o *Options) {
		o.MaxFrameBytes = maxFrame
		o.MaxInterceptedBytes = 4 << 20
		o.BufferHighWater = hw
		o.MaxBufferedBytes = budget
	})
	if err := p.Register(int16(kmsg.JoinGroup), 0, 9, false, InterceptorFunc(func(*Request, Outcome) {
		t.Error("interceptor called for a request never completed")
	})); err != nil {
		t.Fatal(err)
	}
	good := dialRaw(t, p.addr)
	frame := benchProduceFrame(1 << 10)
	var buf []byte
	roundTrip := func(corr int32) {
		t.Helper()
		_ = good.SetDeadline(time.Now().Add(20 * time.Second))
		buf = rawRoundTrip(t, good, frame, buf, corr)
	}
	roundTrip(0)

	// Stalled mid-frame: 1 of the 2 MiB of a JoinGroup (under the
	// intercepted limit, so it is awaited whole).
	stalled := dialRaw(t, p.addr)
	var head [12]byte
	binary.BigEndian.PutUint32(head[:], 2<<20-4)
	binary.BigEndian.PutUint16(head[4:], uint16(kmsg.JoinGroup))
	binary.BigEndian.PutUint16(head[6:], 5)
	if _, err := stalled.Write(append(head[:], make([]byte, 1<<20)...)); err != nil {
		t.Fatal(err)
	}
	// Pipeliners: write until the proxy closes them.
	batch, _ := metadataBatch(256 << 10)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		c := dialRaw(t, p.addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_ = c.SetWriteDeadline(time.Now().Add(20 * time.Second))
				if _, err := c.Write(batch); err != nil {
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for corr := int32(1); ; corr++ {
		roundTrip(corr)
		select {
		case <-done:
		default:
			continue
		}
		break
	}
	roundTrip(-1)
	if got := counterValue(t, p.m.connsClosed.WithLabelValues("memory")); got < 1 {
		t.Errorf("connections closed for the budget: %v, want at least 1", got)
	}
	// Past the budget a connection above its fair share is closed after the
	// read that brought it there (one read of 1 MiB per event loop at a
	// time), while those under it may still grow to their share.
	slack := int64(p.opts.EventLoops)<<20 + budget/6
	if peak := p.mem.peak.Load(); peak > budget+slack {
		t.Errorf("held up to %d bytes, budget %d (+%d)", peak, budget, slack)
	}
	// The stalled connection held less than the pipeliners: still open.
	_ = stalled.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	var b [1]byte
	if _, err := stalled.Read(b[:]); err == nil {
		t.Error("the stalled connection got bytes")
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Errorf("the stalled connection, holding less than the pipeliners, was closed: %v", err)
	}
}

// serveProduceCheck answers Produce requests after checking that each one's
// records are the bytes the client put there (every byte is the request's
// correlation id), so a request the proxy split, held in pieces and passed
// on out of order or mixed with another fails; it answers the control plane
// like the other fake brokers. It answers no Produce before release closes.
func serveProduceCheck(t *testing.T, release <-chan struct{}) func(b *fakeBroker, c net.Conn) {
	return func(b *fakeBroker, c net.Conn) {
		var msg []byte
		for {
			h, m, err := readRequest(c, msg)
			if err != nil {
				return
			}
			msg = m
			var out []byte
			if h.Key == int16(kmsg.Produce) {
				<-release
				req := kmsg.NewPtrProduceRequest()
				req.SetVersion(h.Version)
				if err := req.ReadFrom(m[h.BodyAt:]); err != nil {
					t.Errorf("produce %d: %v", h.Corr, err)
					return
				}
				recs := req.Topics[0].Partitions[0].Records
				for i, x := range recs {
					if x != byte(h.Corr) {
						t.Errorf("produce %d: record byte %d is %d", h.Corr, i, x)
						return
					}
				}
				resp := kmsg.NewPtrProduceResponse()
				resp.SetVersion(h.Version)
				resp.Topics = []kmsg.ProduceResponseTopic{{Topic: "t", Partitions: []kmsg.ProduceResponseTopicPartition{{Partition: int32(len(recs))}}}}
				out = kafkaframe.AppendResponse(nil, h.Corr, resp)
			} else if out = b.controlPlaneAnswer(h); out == nil {
				return
			}
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	}
}

// TestHeldInputKeepsOrder: requests of many sizes, written in pieces that
// split them anywhere, while the first is not answered (with one request in
// flight at most, the proxy holds all the others): every request reaches the
// broker whole and in order, and every answer comes back in order.
func TestHeldInputKeepsOrder(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	up := startFakeBroker(t, serveProduceCheck(t, release))
	p := startProxy(t, []string{up.addr()}, func(o *Options) {
		o.MaxInflight = 1
		o.MaxFrameBytes = 64 << 20 // holds all the client writes
	})
	rng := rand.New(rand.NewPCG(1, 2))
	var stream []byte
	var sizes []int
	for corr := int32(0); corr < 300; corr++ {
		size := 1 + rng.IntN(200<<10)
		if corr%3 == 0 {
			size = 1 + rng.IntN(64) // small ones between the large
		}
		req := kmsg.NewPtrProduceRequest()
		req.Version = 7
		req.Acks = 1
		req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Records: bytes.Repeat([]byte{byte(corr)}, size)}}}}
		id := "order"
		stream = kafkaframe.AppendRequest(stream, corr, &id, req)
		sizes = append(sizes, size)
	}
	c := dialRaw(t, p.addr)
	wrote := make(chan error, 1)
	go func() {
		for rest := stream; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(96<<10))
			if _, err := c.Write(rest[:n]); err != nil {
				wrote <- err
				return
			}
			rest = rest[n:]
		}
		wrote <- nil
	}()
	// Read nothing until everything was written (the kernel's buffers and
	// the proxy hold it), then everything.
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the proxy holding the requests", func() error {
		if got, want := p.mem.total.Load(), int64(len(stream)/2); got < want {
			return fmtErr("held %d bytes, want at least %d", got, want)
		}
		return nil
	})
	close(release)
	if peak := p.mem.peak.Load(); peak < 1<<20 {
		t.Errorf("the proxy held at most %d bytes: the test did not make it hold requests", peak)
	}
	for corr, size := range sizes {
		frame := c.recv()
		if got := frameCorr(frame); got != int32(corr) {
			t.Fatalf("response %d has correlation id %d", corr, got)
		}
		resp := kmsg.NewPtrProduceResponse()
		resp.SetVersion(7)
		if err := resp.ReadFrom(frame[8:]); err != nil {
			t.Fatal(err)
		}
		if got := resp.Topics[0].Partitions[0].Partition; got != int32(size) {
			t.Fatalf("request %d reached the broker with %d record bytes, want %d", corr, got, size)
		}
	}
}

// bufferedConn is a gnet.Conn that reports fixed buffered byte counts.
type bufferedConn struct {
	gnet.Conn
	in, out int
}

func (c *bufferedConn) InboundBuffered() int  { return c.in }
func (c *bufferedConn) OutboundBuffered() int { return c.out }

// TestOverShare: past half the budget, a connection whose responses and
// forwarded requests pass its share takes no new request; its unread input
// does not count (pausing would only make that grow).
func TestOverShare(t *testing.T) {
	t.Parallel()
	p := &Proxy{}
	p.mem.limit = 8 << 20
	p.active.Store(4) // share: 2 MiB
	for _, tc := range []struct {
		name             string
		total            int64
		out, up, in, buf int
		want             bool
	}{
		{"budget under half used", 4 << 20, 3 << 20, 0, 0, 0, false},
		{"under its share", 5 << 20, 1 << 20, 0, 0, 512 << 10, false},
		{"responses over its share", 5 << 20, 1 << 20, 0, 0, 1<<20 + 1, true},
		{"requests waiting upstream over its share", 5 << 20, 0, 3 << 20, 0, 0, true},
		{"unread input only", 5 << 20, 0, 0, 3 << 20, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.mem.total.Store(tc.total)
			cc := &clientConn{p: p, conn: &bufferedConn{in: tc.in, out: tc.out}, up: &bufferedConn{out: tc.up}, buffered: tc.buf}
			if got := cc.overShare(); got != tc.want {
				t.Errorf("overShare = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestHeldBytesFallAfterDrain: a large answer waits in the proxy for a
// client that reads it only later; gnet writes it out without an event of
// the proxy's, yet the bytes published must fall back to zero.
func TestHeldBytesFallAfterDrain(t *testing.T) {
	t.Parallel()
	const answer = 16 << 20
	up := startFakeBroker(t, func(b *fakeBroker, c net.Conn) {
		var msg []byte
		for {
			h, m, err := readRequest(c, msg)
			if err != nil {
				return
			}
			msg = m
			out := b.controlPlaneAnswer(h)
			if h.Key == int16(kmsg.Produce) {
				resp := kmsg.NewPtrProduceResponse()
				resp.SetVersion(h.Version)
				big := string(make([]byte, answer))
				resp.Topics = []kmsg.ProduceResponseTopic{{Topic: "t", Partitions: []kmsg.ProduceResponseTopicPartition{{ErrorMessage: &big}}}}
				out = kafkaframe.AppendResponse(nil, h.Corr, resp)
			}
			if out == nil {
				return
			}
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	})
	p := startProxy(t, []string{up.addr()}, nil)
	c := dialRaw(t, p.addr)
	// A small receive buffer (no autotuning): the kernel takes little of
	// the answer, the proxy holds the rest.
	if err := c.Conn.(*net.TCPConn).SetReadBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version = 8
	req.Acks = 1
	c.send(1, req)
	waitFor(t, "the answer held in the proxy", func() error {
		if got := p.mem.total.Load(); got < 4<<20 {
			return fmtErr("%d bytes held (peak %d)", got, p.mem.peak.Load())
		}
		return nil
	})
	if frame := c.recv(); len(frame) < answer {
		t.Fatalf("answer of %d bytes", len(frame))
	}
	waitFor(t, "the held bytes published falling to zero", func() error {
		if got := p.mem.total.Load(); got != 0 {
			return fmtErr("%d bytes still counted", got)
		}
		return nil
	})
}
