package proxy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// clientConn is the state of one client connection and its upstream
// connection. Both run on the same gnet loop, so every field below done is
// touched only on that loop; goroutines post work back with onLoop.
type clientConn struct {
	p      *Proxy
	id     uint64
	conn   gnet.Conn
	loop   gnet.EventLoop
	node   int32 // upstream node of the listener, -1 for bootstrap
	remote string
	since  time.Time
	done   chan struct{} // closed with the client connection
	// closedAt is when done closed (the disconnect expiry counts from it).
	closedAt closeTime

	up      gnet.Conn // set once the upstream connection is open
	upAddr  string
	upReady bool

	ring     slotQueue // every slot, client order
	sent     slotQueue // slots awaiting an upstream response, upstream order
	buffered int       // bytes of responses held in slots behind the head
	blocked  bool      // an intercepted request awaits its outcome
	decoded  int       // what the intercepted request costs meanwhile (interceptHoldFactor)
	inflWait bool      // reading stopped at the in-flight cap
	paused   bool      // reading stopped at a limit (for the pause metric)
	// streamLeft is what remains of an upstream response being passed
	// through to the client as it arrives (see canStream), reqStreamLeft
	// the same for a client request going upstream (startRequestStream).
	streamLeft    int
	reqStreamLeft int
	closed        bool
	reason        string       // why the proxy closed the connection, for the log
	in            heldInput    // request bytes taken out of gnet (inbound.go)
	held          atomic.Int64 // bytes held, as last published (budget.go)
	asking        askState     // requests of the proxy's own (ask.go)
	sasl          saslState    // the principal the broker sees (sasl_principal.go)
	peers         peersServed  // links its serve calls took (peer_conn_closed.go)

	requests  uint64
	clientID  string
	swName    string
	swVersion string

	ip  netip.Addr // counted by limits.max-connections-per-ip (conn_limits.go)
	adv *apiTable  // what the last ApiVersions answer told the client; nil: none yet (advertised.go)
	// The ticker's sweep reads lastRequest and partialSince off the loop
	// (timeouts.go); noteArrival sets them on the loop.
	lastRequest  atomic.Int64 // coarse clock of the last request (or the accept)
	partialSince atomic.Int64 // coarse clock of the first bytes of an incomplete head frame, 0: none
	seenRequests uint64       // requests when lastRequest was set
	partialOf    uint64       // requests when partialSince was set
}

// upstreamConn is the context of an upstream connection.
type upstreamConn struct {
	cc   *clientConn
	addr string
	tls  *tlsConn // set when the upstream speaks TLS (tls_handshake.go)
}

func (cc *clientConn) info() ClientInfo {
	return ClientInfo{ConnID: cc.id, RemoteAddr: cc.remote, Node: cc.node, ClientID: cc.clientID,
		SoftwareName: cc.swName, SoftwareVersion: cc.swVersion, Principal: cc.sasl.current()}
}

// onLoop runs fn on the connection's loop unless the connection closed by then.
func (cc *clientConn) onLoop(fn func()) {
	_ = cc.loop.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		if !cc.closed {
			fn()
		}
		return nil
	}))
}

// closeWith closes the client connection from the loop with a logged reason.
func (cc *clientConn) closeWith(reason string) {
	if cc.reason == "" {
		cc.reason = reason
	}
	_ = cc.conn.Close()
}

// dial connects the upstream off the loop and enrolls it on the client's loop.
// A bootstrap connection tries the upstream bootstrap list in turn; a node
// connection goes to that node's address from the latest metadata.
func (cc *clientConn) dial() {
	p := cc.p
	addrs, err := p.upstreamAddrs(cc.node)
	if err != nil {
		cc.dialFailed(err)
		return
	}
	var errs []error
	d := net.Dialer{Timeout: p.opts.DialTimeout}
	for _, addr := range addrs {
		select {
		case <-cc.done:
			return
		default:
		}
		nc, err := d.Dial("tcp", addr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if tc, ok := nc.(*net.TCPConn); ok && upstreamSendBufferAllowed() {
			// A request the broker has not read yet waits in the kernel
			// rather than being copied into gnet's outbound buffer and
			// written again later (brokers keep small receive buffers:
			// socket.receive.buffer.bytes is 100 KiB by default).
			_ = tc.SetWriteBuffer(upstreamSendBuffer)
		}
		uc := &upstreamConn{cc: cc, addr: addr}
		if p.opts.UpstreamTLS != nil {
			if err := uc.upstreamHandshake(nc, p.opts.UpstreamTLS, p.opts.DialTimeout); err != nil {
				_ = nc.Close()
				errs = append(errs, err)
				continue
			}
		}
		ch, err := cc.loop.Enroll(gnet.NewContext(context.Background(), uc), nc)
		if err != nil {
			_ = nc.Close()
			errs = append(errs, fmt.Errorf("enroll %s: %w", addr, err))
			break
		}
		if res := <-ch; res.Err != nil {
			errs = append(errs, fmt.Errorf("enroll %s: %w", addr, res.Err))
			continue
		}
		return
	}
	cc.dialFailed(errors.Join(errs...))
}

func (cc *clientConn) dialFailed(err error) {
	p := cc.p
	p.m.upstreamDialFailed.Inc()
	p.log.Warn().Uint64("conn", cc.id).Str("remote", cc.remote).Int32("node", cc.node).Err(err).Msg("upstream unreachable; closing client connection")
	cc.onLoop(func() { cc.closeWith("upstream unreachable") })
}

// upstreamOpened runs in the upstream's OnOpen on the client's loop.
func (cc *clientConn) upstreamOpened(c gnet.Conn, uc *upstreamConn) gnet.Action {
	if cc.closed {
		return gnet.Close
	}
	cc.up, cc.upAddr, cc.upReady = c, uc.addr, true
	cc.p.m.upstreamConns.Inc()
	cc.p.log.Info().Uint64("conn", cc.id).Str("upstream", uc.addr).Msg("upstream connected")
	// Requests that arrived while dialling wait in the client's buffer.
	_ = cc.conn.Wake(nil)
	return gnet.None
}

func (cc *clientConn) closedUpstream(c gnet.Conn, err error) {
	if cc.up == c {
		cc.p.m.upstreamConns.Dec()
		cc.up, cc.upReady = nil, false
	}
	if !cc.closed {
		reason := "upstream closed the connection"
		if err != nil {
			reason = "upstream connection failed: " + err.Error()
		}
		cc.closeWith(reason)
	}
}

// connClosedAt is when the connection closed (zero while open).
func (cc *clientConn) connClosedAt() func() time.Time { return cc.closedAt.get }

// Done is closed with the client connection (ClientConn).
func (cc *clientConn) Done() <-chan struct{} { return cc.done }

// closeTime is when a connection's close signal closed; zero while open.
// Set before the signal closes, read by whoever saw it close.
type closeTime struct{ at atomic.Int64 }

func (c *closeTime) set(t time.Time) { c.at.Store(t.UnixNano()) }

func (c *closeTime) get() time.Time {
	if n := c.at.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

func (cc *clientConn) closedClient(err error) {
	p := cc.p
	cc.closed = true
	cc.closedAt.set(time.Now())
	close(cc.done)
	cc.tellPeersClosed()
	cc.ring.reset()
	cc.sent.reset()
	if cc.up != nil {
		_ = cc.up.Close()
	}
	cc.in = heldInput{}
	cc.unaccount()
	p.mu.Lock()
	delete(p.conns, cc)
	delete(p.byID, cc.id)
	p.releaseLocked(cc.ip)
	p.budgetClosed(cc)
	p.mu.Unlock()
	p.active.Add(-1)
	p.m.clientConns.Dec()
	reason := cc.reason
	switch {
	case reason != "":
	case err != nil:
		reason = err.Error()
	default:
		reason = "client closed the connection"
	}
	p.connLog().Uint64("conn", cc.id).Str("remote", cc.remote).Str("reason", reason).
		Uint64("requests", cc.requests).Dur("duration", time.Since(cc.since)).Msg("client disconnected")
	p.tapClosed(cc, reason)
}

// reject closes the client connection over a request it cannot take, as a
// broker closes a connection whose request it cannot parse.
//
// reason is the metric's label, one of a fixed few (a client must not be
// able to grow the label set: a frame size or a decoder's words in it made
// one series per hostile request); detail, if any, is for the log line and
// the disconnect reason only.
func (cc *clientConn) reject(reason, detail string, key, version int16) gnet.Action {
	p := cc.p
	p.m.frameRejected.WithLabelValues(reason).Inc()
	why := reason
	if detail != "" {
		why += ": " + detail
	}
	p.log.Warn().Uint64("conn", cc.id).Str("remote", cc.remote).Str("api", kmsg.NameForKey(key)).
		Int16("version", version).Str("reason", why).Msg("bad request; closing client connection")
	cc.reason = "bad request: " + why
	return gnet.Close
}

// readRequests consumes whole request frames from the client while the limits
// allow. Bytes it leaves are held (inbound.go); whoever lifts the limit wakes
// the connection. What the connection holds then counts against the memory
// budget (budget.go).
func (cc *clientConn) readRequests() gnet.Action {
	act := cc.readFrames()
	if act == gnet.None {
		cc.keepInput()
		if cc.account(true) {
			return cc.closeOverBudget()
		}
	}
	return act
}

func (cc *clientConn) readFrames() gnet.Action {
	p := cc.p
	for {
		if cc.closed {
			return gnet.Close
		}
		if !cc.upReady || cc.blocked {
			if act := cc.refuseOversizedLocal(); act != gnet.None {
				return act
			}
			return cc.checkInboundCap()
		}
		// Requests go upstream at once whatever the upstream socket takes:
		// gnet keeps reading the client anyway, so holding them back would
		// only move the bytes from one proxy buffer to another, later.
		// checkInboundCap bounds both buffers together.
		if act := cc.checkInboundCap(); act != gnet.None {
			return act
		}
		hw := p.opts.BufferHighWater
		if cc.reqStreamLeft > 0 {
			// The rest of a request already partly sent upstream, even
			// while draining: the upstream must see whole frames.
			chunk := cc.inPeekSome(min(cc.reqStreamLeft, streamChunk))
			n := len(chunk)
			if n == 0 {
				return gnet.None
			}
			_, _ = cc.up.Write(chunk)
			cc.inDiscard(n)
			cc.reqStreamLeft -= n
			if cc.reqStreamLeft == 0 && len(cc.asking.held) > 0 {
				cc.sendHeldAsks() // unless a SASL exchange holds them
			}
			continue
		}
		if p.draining.Load() {
			if cc.ring.len() == 0 && cc.conn.OutboundBuffered() == 0 {
				cc.reason = "proxy shutting down"
				return gnet.Close
			}
			p.parkConn(cc.conn)
			return gnet.None
		}
		if cc.sent.len() >= p.opts.MaxInflight {
			cc.inflWait = true
			cc.notePause()
			return cc.checkInboundCap()
		}
		// A client that does not read its responses gets no more requests
		// forwarded, so no more responses pile up for it. Requests waiting
		// for the upstream socket do not pause reading (see above).
		if cc.conn.OutboundBuffered()+cc.buffered > hw || cc.overShare() {
			cc.notePause()
			p.parkConn(cc.conn)
			return cc.checkInboundCap()
		}
		head, err := cc.inPeek(4)
		if err != nil {
			return gnet.None
		}
		size := kafkaframe.Size(head)
		if size < kafkaframe.MinRequestSize || size > p.opts.MaxFrameBytes {
			return cc.reject("frame size outside the allowed range", fmt.Sprintf("%d outside %d..%d", size, kafkaframe.MinRequestSize, p.opts.MaxFrameBytes), -1, -1)
		}
		if size > p.opts.MaxInterceptedBytes {
			if act := cc.refuseOversizedLocal(); act != gnet.None {
				return act
			}
		}
		if cc.sent.fetches >= maxInflightFetches {
			key, err := cc.inPeek(6)
			if err != nil {
				return cc.checkInboundCap()
			}
			if isFetch(int16(binary.BigEndian.Uint16(key[4:]))) {
				cc.inflWait = true
				cc.notePause()
				return cc.checkInboundCap()
			}
		}
		cc.paused = false
		if buffered := cc.inBuffered(); 4+size > buffered && buffered >= streamMin {
			prefix, err := cc.inPeek(min(buffered, streamMin))
			if err == nil && cc.startRequestStream(prefix, size) {
				continue
			}
		}
		frame, err := cc.inPeek(4 + size)
		if err != nil {
			return cc.checkInboundCap()
		}
		act := cc.handleRequest(frame)
		cc.inDiscard(4 + size)
		if act != gnet.None {
			return act
		}
	}
}

// maxInflightFetches caps the Fetch (and ShareFetch) requests of one client
// connection awaiting their response: each answer can be as large as the
// broker's fetch.max.bytes (55 MiB by default), and gnet reads every answer
// into memory whether or not the client reads it. Kafka's clients send one
// Fetch per connection at a time, and a broker answers the requests of a
// connection one after the other anyway, so the cap costs them nothing.
const maxInflightFetches = 2

// notePause counts a pause once, not every re-check while it lasts.
func (cc *clientConn) notePause() {
	if !cc.paused {
		cc.paused = true
		cc.p.m.paused.Inc()
	}
}

// streamMin is the least a large request must have buffered before it is
// passed through while arriving; smaller frames are simply awaited whole.
const streamMin = 64 << 10

// startRequestStream decides from the first bytes of a large request still
// arriving whether it can go upstream as it comes (a big Produce, typically),
// instead of being buffered whole. Requests the proxy answers, decodes or
// rejects, and any request while a tap copies frames, wait for the whole frame.
func (cc *clientConn) startRequestStream(prefix []byte, size int) bool {
	p := cc.p
	msg := prefix[4:]
	key, version, corr := kafkaframe.FixedHeader(msg)
	if p.taps(key) {
		return false
	}
	if key == int16(kmsg.ApiVersions) || key == int16(kmsg.SASLHandshake) || key == int16(kmsg.SASLAuthenticate) || p.reg.lookup(key, version) != nil {
		return false
	}
	if _, above := p.reg.cappedAbove(key, version); above || !cc.advertised(key, version) {
		return false // refused by handleRequest
	}
	rewrite := needsRewrite(key, version)
	if rewrite || key == int16(kmsg.Fetch) {
		if top, _ := versionCap(key); version > top {
			return false
		}
	}
	acks := int16(-1)
	if key == int16(kmsg.Produce) {
		var err error
		if acks, err = produceAcks(msg); err != nil {
			return false // let the whole-frame path judge it
		}
	}
	if cc.asking.sasl {
		cc.saslExchangeEnds(kmsg.NameForKey(key)) // held asks go before the request's first bytes
	}
	cc.requests++
	p.m.request(key)
	p.m.upstream(key) // its chunks follow as they arrive
	cc.reqStreamLeft = 4 + size
	if acks == 0 {
		return true // no response, no slot
	}
	s := &slot{corr: corr, key: key, version: version, rewrite: rewrite, upstream: true}
	cc.ring.push(s)
	cc.sent.push(s)
	return true
}

// checkInboundCap bounds the request bytes a client connection holds in the
// proxy: what gnet read from the client and the proxy has not consumed yet,
// plus what waits for the upstream socket. gnet has no read pause (it reads
// whatever arrives and keeps what OnTraffic leaves), so this cap, not the
// pauses, bounds memory. A well-behaved client has at most max.in.flight
// requests outstanding and a broker reads the next as soon as it answered
// one, so more than a full frame beyond twice the high-water mark is abuse.
func (cc *clientConn) checkInboundCap() gnet.Action {
	held := cc.inBuffered()
	if cc.up != nil {
		held += cc.up.OutboundBuffered()
	}
	if held > cc.p.opts.MaxFrameBytes+2*cc.p.opts.BufferHighWater {
		return cc.reject("client sent too much while the proxy held its earlier requests", "", -1, -1)
	}
	return gnet.None
}

// handleRequest routes one complete request frame. frame aliases gnet's
// buffer: it is valid until Discard, so anything kept is copied.
func (cc *clientConn) handleRequest(frame []byte) gnet.Action {
	p := cc.p
	msg := frame[4:]
	key, version, corr := kafkaframe.FixedHeader(msg)
	cc.requests++
	p.m.request(key)
	if cc.asking.sasl && key != int16(kmsg.SASLHandshake) && key != int16(kmsg.SASLAuthenticate) {
		cc.saslExchangeEnds(kmsg.NameForKey(key)) // the client's next request
	}

	if key == int16(kmsg.ApiVersions) {
		return cc.apiVersions(frame, version, corr)
	}
	if key == int16(kmsg.SASLHandshake) && version == 0 {
		// v0 is followed by raw SASL tokens without request headers, which
		// cannot be matched to responses; ApiVersions advertises v1+ only.
		return cc.reject("SaslHandshake v0 (unframed SASL tokens) is not supported; clients since Kafka 1.0 use v1", "", key, version)
	}
	if reg := p.reg.lookup(key, version); reg != nil {
		return cc.intercept(frame, reg)
	}
	if top, above := p.reg.cappedAbove(key, version); above {
		return cc.reject("version above the advertised", fmt.Sprintf("v%d above v%d", version, top), key, version)
	}
	if !cc.advertised(key, version) {
		cc.rejectUnadvertised(key, version)
		return gnet.Close
	}
	rewrite := needsRewrite(key, version)
	if rewrite || key == int16(kmsg.Fetch) {
		// A version above what ApiVersions advertised cannot be rewritten.
		if top, _ := versionCap(key); version > top {
			return cc.reject("version above the advertised", fmt.Sprintf("v%d above v%d", version, top), key, version)
		}
	}
	if key == int16(kmsg.Produce) {
		acks, err := produceAcks(msg)
		if err != nil {
			return cc.reject("malformed produce request", err.Error(), key, version)
		}
		if acks == 0 {
			// No response will come, so no slot.
			p.m.upstream(key)
			_, _ = cc.up.Write(frame)
			if p.taps(key) {
				now := time.Now()
				p.opts.Tap.Exchange(&Exchange{Client: cc.info(), Key: key, Version: version, CorrelationID: corr,
					Request: clone(frame), Received: now, At: now, Opened: cc.since})
			}
			return gnet.None
		}
	}
	saslAuth := false
	switch key {
	case int16(kmsg.SASLHandshake):
		cc.noteSaslHandshake(msg, version)
		cc.saslExchangeStarts()
	case int16(kmsg.SASLAuthenticate):
		cc.noteSaslAuthenticate(msg, version)
		saslAuth = true
	}
	cc.forward(frame, &slot{corr: corr, key: key, version: version, rewrite: rewrite, saslAuth: saslAuth})
	return gnet.None
}

// forward writes a request upstream and queues its slot. gnet copies frame
// only if the socket cannot take it at once.
func (cc *clientConn) forward(frame []byte, s *slot) {
	if s.tapReq == nil && cc.p.taps(s.key) {
		s.tapReq, s.tapAt = clone(frame), time.Now()
	}
	s.upstream = true
	cc.ring.push(s)
	cc.sent.push(s)
	cc.p.m.upstream(s.key)
	_, _ = cc.up.Write(frame)
}

// apiVersions answers a too-new ApiVersions request locally and forwards the
// others, remembering the client's software name (KIP-511).
func (cc *clientConn) apiVersions(frame []byte, version int16, corr int32) gnet.Action {
	p := cc.p
	if version > maxApiVersions || version < 0 {
		s := &slot{corr: corr, key: int16(kmsg.ApiVersions), version: version, local: true, done: true, resp: unsupportedApiVersions(corr)}
		if p.taps(s.key) {
			s.tapReq, s.tapAt = clone(frame), time.Now()
		}
		cc.buffered += len(s.resp)
		cc.ring.push(s)
		p.m.localResponses.Inc()
		cc.flush()
		return gnet.None
	}
	if h, err := kafkaframe.ParseRequestHeader(frame[4:]); err == nil {
		if h.ClientID != nil {
			cc.clientID = kafkaString(*h.ClientID)
		}
		if version >= 3 {
			req := kmsg.NewPtrApiVersionsRequest()
			req.SetVersion(version)
			if req.ReadFrom(frame[4+h.BodyAt:]) == nil {
				cc.swName, cc.swVersion = kafkaString(req.ClientSoftwareName), kafkaString(req.ClientSoftwareVersion)
			}
		}
	}
	cc.forward(frame, &slot{corr: corr, key: int16(kmsg.ApiVersions), version: version, rewrite: true})
	return gnet.None
}

// readResponses consumes upstream response frames and matches each with the
// oldest request sent upstream; the broker answers one connection in order.
func (cc *clientConn) readResponses(up gnet.Conn) gnet.Action {
	p := cc.p
	for {
		if cc.closed || up != cc.up {
			return gnet.Close
		}
		// Responses go on to the client whatever its socket takes: they
		// answer requests already forwarded (at most MaxInflight, and none
		// while the client's unsent responses pass the high-water mark,
		// see readRequests), and gnet would read and hold them anyway.
		if cc.streamLeft > 0 {
			n := min(up.InboundBuffered(), cc.streamLeft, streamChunk)
			if n == 0 {
				break
			}
			chunk, err := up.Peek(n)
			if err != nil {
				break
			}
			_, _ = cc.conn.Write(chunk)
			_, _ = up.Discard(n)
			cc.streamLeft -= n
			if cc.streamLeft == 0 {
				cc.flush()
			}
			continue
		}
		head, err := up.Peek(8)
		if err != nil {
			break
		}
		size := kafkaframe.Size(head)
		if size < 4 || size > maxResponseBytes {
			return cc.upstreamProtocolError(fmt.Sprintf("response frame size %d", size))
		}
		if s := cc.sent.peek(); size+4 > up.InboundBuffered() && s != nil && cc.canStream(s, head) {
			// A large response still arriving for the head of the ring with
			// nothing to rewrite: pass its bytes through as they come
			// instead of buffering the whole frame (Fetch responses reach
			// tens of MiB).
			cc.sent.pop()
			cc.ring.pop()
			cc.streamLeft = 4 + size
			continue
		}
		frame, err := up.Peek(4 + size)
		if err != nil {
			break
		}
		corr := int32(binary.BigEndian.Uint32(frame[4:]))
		s := cc.sent.peek()
		if s == nil {
			return cc.upstreamProtocolError(fmt.Sprintf("response (correlation id %d) to no request", corr))
		}
		if s.corr != corr {
			return cc.upstreamProtocolError(fmt.Sprintf("%s response has correlation id %d, expected %d", kmsg.NameForKey(s.key), corr, s.corr))
		}
		cc.sent.pop()
		if err := cc.completeForwarded(s, frame); err != nil {
			return cc.upstreamProtocolError(err.Error())
		}
		_, _ = up.Discard(4 + size)
		cc.flush()
	}
	if cc.inflWait && cc.sent.len() < p.opts.MaxInflight {
		cc.inflWait = false
		_ = cc.conn.Wake(nil)
	}
	cc.account(false) // an answer in flight keeps flowing
	return gnet.None
}

// upstreamSendBuffer is the SO_SNDBUF of upstream connections.
const upstreamSendBuffer = 4 << 20

// upstreamSendBufferAllowed reports whether the kernel lets a socket have
// upstreamSendBuffer: setting SO_SNDBUF turns the kernel's send-buffer
// autotuning off and is capped at net.core.wmem_max (212,992 bytes on a
// default Linux), which would leave a smaller buffer than autotuning gives.
var upstreamSendBufferAllowed = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/proc/sys/net/core/wmem_max")
	if err != nil {
		return false
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && limit >= upstreamSendBuffer
})

// streamChunk bounds one pass-through write, and so the copy gnet makes when
// the buffered bytes wrap around its ring.
const streamChunk = 1 << 20

// canStream says whether the response starting with head can be passed
// through while it arrives: it answers the head of the ring (nothing is
// written before it), needs no rewriting and no tap copy.
func (cc *clientConn) canStream(s *slot, head []byte) bool {
	return cc.ring.peek() == s && !s.rewrite && !s.rewritten && !s.saslAuth && s.tapReq == nil &&
		s.corr == int32(binary.BigEndian.Uint32(head[4:]))
}

// upstreamProtocolError closes both connections: after an unexpected response
// the stream cannot be trusted to stay in step.
func (cc *clientConn) upstreamProtocolError(reason string) gnet.Action {
	p := cc.p
	p.m.protocolErrors.Inc()
	p.log.Error().Uint64("conn", cc.id).Str("upstream", cc.upAddr).Str("reason", reason).Msg("upstream protocol error; closing connection")
	cc.closeWith("upstream protocol error: " + reason)
	return gnet.Close
}

// completeForwarded turns an upstream response into the slot's client
// response. An untouched response at the head of the ring goes straight from
// gnet's buffer to the client; anything held behind the head is copied.
func (cc *clientConn) completeForwarded(s *slot, frame []byte) error {
	p := cc.p
	s.upstream = false
	if s.ask != nil {
		cc.answerAsk(s, frame)
		return nil
	}
	if s.saslAuth && cc.noteSaslAuthenticated(frame, s.version) {
		cc.saslExchangeEnds("SaslAuthenticate answer")
	}
	if s.rewritten {
		own := clone(frame)
		go cc.finishRewritten(s, own)
		return nil
	}
	out := frame
	owned := false
	if s.rewrite {
		var rw []byte
		var err error
		if s.key == int16(kmsg.ApiVersions) {
			var adv apiTable
			rw, adv, err = rewriteApiVersions(p.reg.apiVersionsRegs(), p.clusterVersions(), s.version, frame)
			if adv != nil {
				cc.setAdvertised(adv)
			}
		} else {
			rw, err = rewriteResponse(p.nodes, s.key, s.version, frame)
		}
		if err != nil {
			return err
		}
		if rw != nil {
			out, owned = rw, true
		}
	}
	if cc.ring.peek() == s {
		cc.ring.pop()
		cc.writeClient(s, out)
		return nil
	}
	if !owned {
		out = clone(out)
	}
	s.resp, s.done = out, true
	cc.buffered += len(out)
	return nil
}

// finishRewritten runs off the loop: it decodes the response to a request an
// interceptor rewrote, lets the interceptor transform it, and encodes it at the
// client's version.
func (cc *clientConn) finishRewritten(s *slot, frame []byte) {
	resp, err := kafkaframe.DecodeResponse(s.key, s.fwdVersion, frame[4:])
	if err == nil && s.onResponse != nil {
		resp, err = callOnResponse(s.onResponse, resp)
	}
	if err == nil && (resp == nil || resp.Key() != s.key) {
		err = fmt.Errorf("interceptor returned no %s response", kmsg.NameForKey(s.key))
	}
	if err != nil {
		cc.p.log.Error().Uint64("conn", cc.id).Str("api", kmsg.NameForKey(s.key)).Err(err).Msg("rewritten response failed; closing client connection")
		cc.onLoop(func() { cc.closeWith("rewritten response failed") })
		return
	}
	resp.SetVersion(s.version)
	if out, ok := cc.buildAnswer(s, resp); ok {
		cc.completeAnswer(s, out, nil)
	}
}

func callOnResponse(fn func(kmsg.Response) kmsg.Response, resp kmsg.Response) (out kmsg.Response, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("onResponse panicked: %v", r)
		}
	}()
	return fn(resp), nil
}

// completeLocal stores a response produced off the loop and writes what the
// ring allows.
func (cc *clientConn) completeLocal(s *slot, frame []byte) {
	s.resp, s.done = frame, true
	cc.buffered += len(frame)
	cc.flush()
	cc.account(false) // the client's requests are refused where they are read
}

// flush writes done slots from the head of the ring, never into the middle
// of a response being passed through.
func (cc *clientConn) flush() {
	if cc.streamLeft > 0 {
		return
	}
	for s := cc.ring.peek(); s != nil && s.done && !cc.closed; s = cc.ring.peek() {
		cc.ring.pop()
		cc.buffered -= len(s.resp)
		cc.writeClient(s, s.resp)
	}
	if cc.p.draining.Load() && cc.ring.len() == 0 && !cc.closed {
		_ = cc.conn.Wake(nil)
	}
}

func (cc *clientConn) writeClient(s *slot, b []byte) {
	if s.tapReq != nil {
		cc.p.opts.Tap.Exchange(&Exchange{Client: cc.info(), Key: s.key, Version: s.version, CorrelationID: s.corr,
			Request: s.tapReq, Response: clone(b), Local: s.local, Received: s.tapAt, At: time.Now(), Opened: cc.since})
	}
	_, _ = cc.conn.Write(b)
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// connLog is the event of a client connect or disconnect line: info, or
// debug with Options.ConnLogDebug.
func (p *Proxy) connLog() *zerolog.Event {
	if p.opts.ConnLogDebug {
		return p.log.Debug()
	}
	return p.log.Info()
}
