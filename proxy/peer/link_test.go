package peer

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// peerRequest is a small wrapped request with correlation id corr.
func peerRequest(corr int32) []byte {
	cid := "app"
	return kafkaframe.AppendRequest(nil, corr, &cid, &kmsg.HeartbeatRequest{Version: 4, Group: "g", MemberID: "m"})[4:]
}

// echoData is what the test handlers answer: the wrapped request's
// correlation id, so a test sees which call got which answer.
func echoData(c *Call) []byte { return binary.BigEndian.AppendUint32(nil, uint32(c.Corr)) }

func principalOf(kind CallKind) ConnPrincipal {
	return ConnPrincipal{Kind: kind, Origin: "origin", Incarnation: 1, ConnID: 1}
}

// refusals counts refused calls by reason.
type refusals struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *refusals) add(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[string]int{}
	}
	r.n[reason]++
}

func (r *refusals) get(reason string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[reason]
}

// blockingHandler is a test's handler: it may block (BlockingHandler).
type blockingHandler = func(context.Context, *Call) ([]byte, int16)

func blocking(m map[CallKind]blockingHandler) map[CallKind]Handler {
	out := map[CallKind]Handler{}
	for k, f := range m {
		out[k] = BlockingHandler(f)
	}
	return out
}

// startPeerPair starts a listener with handlers and a link to it, up.
func startPeerPair(t *testing.T, handlers map[CallKind]blockingHandler, lo func(*ListenerOptions), ko func(*LinkOptions)) (*Listener, *Link) {
	t.Helper()
	o := ListenerOptions{Addr: "127.0.0.1:0", Handlers: blocking(handlers), Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)}
	if lo != nil {
		lo(&o)
	}
	pl, err := Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pl.Close() })
	k := LinkOptions{Self: "origin", Peer: "owner", Addr: pl.Addr().String(), Log: o.Log}
	if ko != nil {
		ko(&k)
	}
	l := NewLink(k)
	t.Cleanup(l.Close)
	waitFor(t, "link up", func() error {
		if !l.Up() {
			return errNotYet
		}
		return nil
	})
	return pl, l
}

func localhost() net.IP { return net.IPv4(127, 0, 0, 1) }

// TestPeerLinkOutOfOrder: a call the owner holds does not block the next
// one on the same link (a held JoinGroup and the heartbeats behind it).
func TestPeerLinkOutOfOrder(t *testing.T) {
	held, release := make(chan struct{}), make(chan struct{})
	_, l := startPeerPair(t, map[CallKind]blockingHandler{KindServe: func(_ context.Context, c *Call) ([]byte, int16) {
		if c.Corr == 1 {
			close(held)
			<-release
		}
		return echoData(c), 0
	}}, nil, nil)

	first := make(chan reply, 1)
	go func() {
		data, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(1), localhost(), time.Hour)
		first <- reply{data, err}
	}()
	<-held
	data, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(2), localhost(), time.Hour)
	if err != nil || binary.BigEndian.Uint32(data) != 2 {
		t.Fatalf("second call behind a held one: %x, %v", data, err)
	}
	select {
	case r := <-first:
		t.Fatalf("the held call returned before its handler answered: %x %v", r.data, r.err)
	default:
	}
	close(release)
	if r := <-first; r.err != nil || binary.BigEndian.Uint32(r.data) != 1 {
		t.Fatalf("held call: %x, %v", r.data, r.err)
	}
}

// TestPeerLinkBounds: with the defaults (4096 calls, 64 MiB per peer), the
// call beyond 4096 in flight is refused at once with
// COORDINATOR_NOT_AVAILABLE and counted; so is one past the bytes.
func TestPeerLinkBounds(t *testing.T) {
	var started atomic.Int32
	release := make(chan struct{})
	var refused refusals
	_, l := startPeerPair(t, map[CallKind]blockingHandler{KindServe: func(_ context.Context, c *Call) ([]byte, int16) {
		started.Add(1)
		<-release
		return echoData(c), 0
	}}, nil, func(o *LinkOptions) { o.Refused = refused.add })

	const limit = 4096
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range limit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(int32(i)), localhost(), time.Hour); err != nil {
				failed.Add(1)
				t.Errorf("call %d within the limit: %v", i, err)
			}
		}()
	}
	waitFor(t, "4096 calls held by the owner", func() error {
		if n := started.Load(); n != limit {
			return fmt.Errorf("%d held", n)
		}
		return nil
	})
	// Its own limit is short so that a missing bound fails the test
	// (refused 0) instead of hanging it; the refusal itself is at once.
	_, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(limit), localhost(), time.Second)
	if code := ErrorCode(err); code != kerr.CoordinatorNotAvailable.Code || refused.get("inflight") != 1 || Result(err) != Refused {
		t.Fatalf("call beyond 4096: code %d (%v, result %s), refused %d; want COORDINATOR_NOT_AVAILABLE, refused, counted once", code, err, Result(err), refused.get("inflight"))
	}
	// The other kinds' budgets are their own.
	if l.Inflight(KindUpstream) != 0 {
		t.Fatalf("upstream budget used: %d", l.Inflight(KindUpstream))
	}
	close(release)
	wg.Wait()
	if failed.Load() > 0 {
		t.FailNow()
	}

	// Bytes: one small call held, then one that would pass 64 MiB in all.
	held := make(chan struct{})
	release2 := make(chan struct{})
	_, l2 := startPeerPair(t, map[CallKind]blockingHandler{KindServe: func(_ context.Context, c *Call) ([]byte, int16) {
		close(held)
		<-release2
		return echoData(c), 0
	}}, nil, func(o *LinkOptions) { o.Refused = refused.add })
	small := peerRequest(1)
	done := make(chan error, 1)
	go func() {
		_, err := l2.Call(context.Background(), principalOf(KindServe), small, localhost(), time.Hour)
		done <- err
	}()
	<-held
	big := make([]byte, 64<<20-len(small)+1)
	_, err = l2.Call(context.Background(), principalOf(KindServe), big, localhost(), time.Second)
	if code := ErrorCode(err); code != kerr.CoordinatorNotAvailable.Code || refused.get("bytes") != 1 {
		t.Fatalf("call past 64 MiB: code %d (%v), refused %d; want COORDINATOR_NOT_AVAILABLE, counted once", code, err, refused.get("bytes"))
	}
	close(release2)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestPeerListenerBounds: the owner bounds the serve calls it runs per
// link too; beyond, the envelope is answered COORDINATOR_NOT_AVAILABLE,
// nothing done, while a leaf on the same link still runs.
func TestPeerListenerBounds(t *testing.T) {
	var started atomic.Int32
	release := make(chan struct{})
	var refused refusals
	_, l := startPeerPair(t, map[CallKind]blockingHandler{
		KindServe: func(_ context.Context, c *Call) ([]byte, int16) {
			started.Add(1)
			<-release
			return echoData(c), 0
		},
		KindUpstream: func(_ context.Context, c *Call) ([]byte, int16) { return echoData(c), 0 },
	}, func(o *ListenerOptions) { o.MaxInflight, o.Refused = 2, refused.add }, nil)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(int32(i)), localhost(), time.Hour); err != nil {
				t.Errorf("call within the owner's limit: %v", err)
			}
		}()
	}
	waitFor(t, "2 calls running", func() error {
		if started.Load() != 2 {
			return errNotYet
		}
		return nil
	})
	_, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(3), localhost(), time.Hour)
	if code := ErrorCode(err); code != kerr.CoordinatorNotAvailable.Code || started.Load() != 2 || refused.get("inflight") != 1 {
		t.Fatalf("third serve call: code %d (%v), %d handlers ran; want COORDINATOR_NOT_AVAILABLE and none run", code, err, started.Load())
	}
	if data, err := l.Call(context.Background(), principalOf(KindUpstream), peerRequest(4), localhost(), time.Hour); err != nil || binary.BigEndian.Uint32(data) != 4 {
		t.Fatalf("a leaf while serve is full: %x %v", data, err)
	}
	close(release)
	wg.Wait()
}

// TestPeerLinkTimeout: a handler that never answers gives the caller
// COORDINATOR_NOT_AVAILABLE once the call's time is up, and its late
// answer is dropped.
func TestPeerLinkTimeout(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	_, l := startPeerPair(t, map[CallKind]blockingHandler{KindServe: func(_ context.Context, c *Call) ([]byte, int16) {
		if calls.Add(1) == 1 {
			<-release
		}
		return echoData(c), 0
	}}, nil, func(o *LinkOptions) { o.Timeout = 50 * time.Millisecond })
	_, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(1), localhost(), 0)
	// Either end may see the time up first: the owner drops the expired
	// call and answers the envelope, or the origin stops waiting; the
	// caller gets the same code.
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("call to a handler that never answers: %v, want COORDINATOR_NOT_AVAILABLE (no answer)", err)
	}
	if l.Inflight(KindServe) != 0 {
		t.Fatalf("timed-out call still counted: %d", l.Inflight(KindServe))
	}
	close(release) // its answer arrives late and must go nowhere
	data, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(2), localhost(), time.Hour)
	if err != nil || binary.BigEndian.Uint32(data) != 2 {
		t.Fatalf("next call after a late answer: %x %v", data, err)
	}
}

// TestPeerLinkLost: a dropped link fails every call in flight (their own
// time limit is an hour), and while it is down calls fail at once.
func TestPeerLinkLost(t *testing.T) {
	var started atomic.Int32
	release := make(chan struct{})
	defer close(release)
	var refused refusals
	pl, l := startPeerPair(t, map[CallKind]blockingHandler{KindServe: func(ctx context.Context, c *Call) ([]byte, int16) {
		started.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return echoData(c), 0
	}}, nil, func(o *LinkOptions) { o.Refused = refused.add })
	const n = 16
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(int32(i)), localhost(), time.Hour)
			errs <- err
		}()
	}
	waitFor(t, "calls held", func() error {
		if started.Load() != n {
			return errNotYet
		}
		return nil
	})
	pl.mu.Lock()
	for c := range pl.conns {
		_ = c.Close()
	}
	pl.mu.Unlock()
	for range n {
		err := <-errs
		var pe *Error
		if !errors.As(err, &pe) || pe.Code != kerr.CoordinatorNotAvailable.Code || !strings.Contains(pe.Reason, "link lost") || Result(err) != LinkDown {
			t.Fatalf("call in flight on a dropped link: %v (result %s), want COORDINATOR_NOT_AVAILABLE (link lost), link_down", err, Result(err))
		}
	}

	// The listener gone, the link stays down: a call fails at once.
	_ = pl.Close()
	waitFor(t, "link down", func() error {
		if l.Up() {
			return errNotYet
		}
		return nil
	})
	_, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(99), localhost(), time.Hour)
	if code := ErrorCode(err); code != kerr.CoordinatorNotAvailable.Code || refused.get("link_down") != 1 || Result(err) != LinkDown {
		t.Fatalf("call while the link is down: code %d (%v, result %s), want COORDINATOR_NOT_AVAILABLE, link_down, counted", code, err, Result(err))
	}
	// Its status says so, and why (/cluster).
	waitFor(t, "the last error", func() error {
		if st := l.Status(); st.Up || st.ConnectedSince != nil || st.LastError == "" || st.LastErrorAt == nil {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
}

// TestPeerLinkReconnects: a link comes back once its peer listens again.
func TestPeerLinkReconnects(t *testing.T) {
	h := map[CallKind]blockingHandler{KindServe: func(_ context.Context, c *Call) ([]byte, int16) { return echoData(c), 0 }}
	pl, l := startPeerPair(t, h, nil, nil)
	addr := pl.Addr().String()
	_ = pl.Close()
	waitFor(t, "link down", func() error {
		if l.Up() {
			return errNotYet
		}
		return nil
	})
	pl2, err := Listen(ListenerOptions{Addr: addr, Handlers: blocking(h), Log: zerolog.New(zerolog.NewTestWriter(t))})
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	defer pl2.Close()
	waitFor(t, "link up again", func() error {
		if !l.Up() {
			return errNotYet
		}
		return nil
	})
	if data, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(5), localhost(), time.Hour); err != nil || binary.BigEndian.Uint32(data) != 5 {
		t.Fatalf("call after reconnect: %x %v", data, err)
	}
}

// peerNode is one instance in TestPeerLinkNoDeadlock: its listener and its
// link to the other.
type peerNode struct {
	pl   *Listener
	link atomic.Pointer[Link]
}

// TestPeerLinkNoDeadlock: both directions full of serve calls whose
// handlers each make an upstream call back to the origin over the other
// link, which is full of the other side's serve calls. With one budget per
// link the upstream calls could not get through; each kind's own budget
// lets every serve call finish.
func TestPeerLinkNoDeadlock(t *testing.T) {
	const limit = 4
	gate := make(chan struct{})
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	nodes := [2]*peerNode{{}, {}}
	for i, n := range nodes {
		serve := func(ctx context.Context, c *Call) ([]byte, int16) {
			<-gate
			back := c.Principal
			back.Kind = KindUpstream
			data, err := nodes[i].link.Load().Call(ctx, back, c.RequestData, c.ClientIP, 0)
			if err != nil {
				return nil, kerr.UnknownServerError.Code
			}
			return data, 0
		}
		upstream := func(_ context.Context, c *Call) ([]byte, int16) { return echoData(c), 0 }
		pl, err := Listen(ListenerOptions{Addr: "127.0.0.1:0", MaxInflight: limit, Log: log,
			Handlers: blocking(map[CallKind]blockingHandler{KindServe: serve, KindUpstream: upstream})})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pl.Close() })
		n.pl = pl
	}
	for i, n := range nodes {
		l := NewLink(LinkOptions{Self: fmt.Sprint(i), Peer: fmt.Sprint(1 - i), Addr: nodes[1-i].pl.Addr().String(), MaxInflight: limit, Timeout: time.Hour, Log: log})
		t.Cleanup(l.Close)
		n.link.Store(l)
	}
	waitFor(t, "links up", func() error {
		if !nodes[0].link.Load().Up() || !nodes[1].link.Load().Up() {
			return errNotYet
		}
		return nil
	})

	const perSide = 4 * limit
	type outcome struct{ err error }
	results := make(chan outcome, 2*perSide)
	for i, n := range nodes {
		for j := range perSide {
			go func() {
				p := principalOf(KindServe)
				p.Origin = fmt.Sprint(i)
				_, err := n.link.Load().Call(context.Background(), p, peerRequest(int32(j)), localhost(), 0)
				results <- outcome{err}
			}()
		}
	}
	waitFor(t, "both directions full of serve calls", func() error {
		if a, b := nodes[0].link.Load().Inflight(KindServe), nodes[1].link.Load().Inflight(KindServe); a != limit || b != limit {
			return fmt.Errorf("in flight %d and %d", a, b)
		}
		return nil
	})
	close(gate)
	var ok, busy int
	for range 2 * perSide {
		r := <-results
		var pe *Error
		switch {
		case r.err == nil:
			ok++
		case errors.As(r.err, &pe) && pe.Code == kerr.CoordinatorNotAvailable.Code && strings.HasPrefix(pe.Reason, "busy"):
			busy++ // refused at once by the origin's serve budget
		default:
			t.Errorf("serve call: %v", r.err)
		}
	}
	if ok < 2*limit {
		t.Fatalf("%d serve calls finished, %d refused as busy: want at least the %d that filled both directions", ok, busy, 2*limit)
	}
}

// dialPeerOnce brings a link up once, returning why it could not.
func dialPeerOnce(o LinkOptions) error {
	o.defaults()
	l := &Link{o: o, ctx: context.Background()}
	conn, err := l.connect()
	if err == nil {
		_ = conn.Close()
	}
	return err
}

// TestPeerListenerRefusesOtherKeys: the internal listener serves
// ApiVersions and Envelope only; anything else closes the connection.
func TestPeerListenerRefusesOtherKeys(t *testing.T) {
	pl, _ := startPeerPair(t, nil, nil, nil)
	conn, err := net.Dial("tcp", pl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(kafkaframe.AppendRequest(nil, 1, nil, kmsg.NewPtrMetadataRequest())); err != nil {
		t.Fatal(err)
	}
	if _, err := kafkaframe.Read(conn, 1<<20); err == nil {
		t.Fatal("Metadata on the internal listener got an answer")
	}
}

// TestPeerListenerMalformedPrincipal: an envelope whose principal does
// not read is answered with Kafka's code, the link stays up, no handler runs.
func TestPeerListenerMalformedPrincipal(t *testing.T) {
	var ran atomic.Bool
	pl, _ := startPeerPair(t, map[CallKind]blockingHandler{KindServe: func(_ context.Context, c *Call) ([]byte, int16) {
		ran.Store(true)
		return echoData(c), 0
	}}, nil, nil)
	conn, err := net.Dial("tcp", pl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	p := principalOf(KindServe)
	req := EnvelopeRequest(&p, peerRequest(1), localhost())
	for i, mut := range []func(){
		func() { req.RequestPrincipal = req.RequestPrincipal[:5] },
		func() { req.RequestPrincipal = []byte{0, 7, 1, 'x'} },
	} {
		mut()
		if _, err := conn.Write(kafkaframe.AppendRequest(nil, int32(10+i), nil, req)); err != nil {
			t.Fatal(err)
		}
		msg, err := kafkaframe.Read(conn, 1<<20)
		if err != nil {
			t.Fatalf("malformed principal %d: link closed: %v", i, err)
		}
		r, err := kafkaframe.DecodeResponse(int16(kmsg.Envelope), 0, msg)
		if err != nil {
			t.Fatal(err)
		}
		if code := r.(*kmsg.EnvelopeResponse).ErrorCode; code != kerr.PrincipalDeserializationFailure.Code || ran.Load() {
			t.Fatalf("malformed principal %d: code %d, handler ran %v", i, code, ran.Load())
		}
	}
}

// TestPeerListenerMaxLinks: inbound links beyond MaxLinks are closed at
// once; one of the links in place still gets its answers.
func TestPeerListenerMaxLinks(t *testing.T) {
	pl, err := Listen(ListenerOptions{Addr: "127.0.0.1:0", MaxLinks: 2, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	var kept []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", pl.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		kept = append(kept, c)
	}
	// The listener counts a link once it accepted it: wait for both.
	waitFor(t, "two links accepted", func() error {
		pl.mu.Lock()
		defer pl.mu.Unlock()
		if len(pl.conns) != 2 {
			return fmt.Errorf("%d links", len(pl.conns))
		}
		return nil
	})
	extra, err := net.Dial("tcp", pl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	_ = extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := extra.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a third link was not closed at once: %v", err)
	}
	if _, err := kept[0].Write(kafkaframe.AppendRequest(nil, 1, nil, kmsg.NewPtrApiVersionsRequest())); err != nil {
		t.Fatal(err)
	}
	_ = kept[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := kafkaframe.Read(kept[0], 1<<20); err != nil {
		t.Fatalf("a link in place: %v", err)
	}
}
