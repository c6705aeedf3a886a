package proxy

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// memBudget bounds the request and response bytes the proxy holds across all
// client connections, as Kafka's queued.max.request.bytes bounds a broker's
// request queue. Each connection publishes what it holds (account) from its
// own loop when that changes, so the total is one atomic add away. Above half
// the budget, a connection whose responses and forwarded requests pass its
// fair share (the budget over the open connections) gets no new request
// forwarded until they drain (overShare); past the budget, a connection above
// its share is closed by the read that brought the total there, and the
// connection holding the most is closed too, one at a time (overBudget).
type memBudget struct {
	limit int64
	total atomic.Int64
	peak  atomic.Int64 // highest total seen, for tests
	// victim is the connection being closed for the budget; nil when none.
	// Set and cleared under Proxy.mu, with the connection table.
	victim *clientConn
}

// account publishes the bytes cc holds: unconsumed requests (held chunks and
// gnet's inbound), responses waiting for the client's socket and in slots
// behind the head, requests waiting for the upstream socket and the part of a
// response still arriving from it, and an intercepted request while it is
// handled (its copy and decoded body). gnet drains outbound bytes without telling
// the handler, so while any wait the connection is woken again shortly to
// publish the lower figure. With enforce (the caller read the client's
// bytes) it reports whether the budget is exhausted and cc holds more than
// its fair share: the caller then closes cc at once, and the biggest holder
// is closed too (overBudget), so the total passes the budget by at most a
// read per event loop. Without (an answer arrived), nothing is refused: an
// answer in flight keeps flowing, and the client's next request is judged.
func (cc *clientConn) account(enforce bool) (over bool) {
	out := cc.conn.OutboundBuffered()
	held := cc.in.n + cc.conn.InboundBuffered() + out + cc.buffered + cc.decoded
	if cc.up != nil {
		upOut := cc.up.OutboundBuffered()
		out += upOut
		held += upOut + cc.up.InboundBuffered()
	}
	if out > 0 {
		cc.p.parkConn(cc.conn)
	}
	d := int64(held) - cc.held.Load()
	if d == 0 {
		return false
	}
	cc.held.Store(int64(held))
	b := &cc.p.mem
	total := b.total.Add(d)
	if d < 0 {
		return false
	}
	if total > b.peak.Load() {
		b.peak.Store(total) // a racy max: a test's upper bound
	}
	if !enforce || total <= b.limit {
		return false
	}
	cc.p.overBudget()
	return int64(held) > b.limit/max(cc.p.active.Load(), 1)
}

// budgetRefuses says whether n more bytes for cc would exhaust the budget
// while cc holds more than its share: what is about to be built for it (a
// decoded request, an answer) is judged as a read is, before it is made.
func (cc *clientConn) budgetRefuses(n int64) bool {
	b := &cc.p.mem
	return b.total.Load()+n > b.limit && cc.held.Load()+n > b.limit/max(cc.p.active.Load(), 1)
}

// closeOverBudget refuses a connection that holds more than its share of an
// exhausted budget; the caller returns gnet.Close.
func (cc *clientConn) closeOverBudget() gnet.Action {
	p := cc.p
	p.m.connsClosed.WithLabelValues("memory").Inc()
	p.log.Warn().Uint64("conn", cc.id).Str("remote", cc.remote).Int64("held_bytes", cc.held.Load()).
		Int64("buffered_bytes", p.mem.total.Load()).Int64("max_buffered_bytes", p.mem.limit).
		Msg("proxy memory budget exhausted; closing a client connection holding more than its share")
	cc.reason = "memory budget (limits.max-buffered-bytes) exhausted; this connection held more than its share"
	return gnet.Close
}

// unaccount drops a closed connection's bytes from the total.
func (cc *clientConn) unaccount() {
	cc.p.mem.total.Add(-cc.held.Swap(0))
}

// overShare says whether cc should take no new request: the budget is half
// used and cc holds more than its fair share of it in bytes that pausing
// lets drain (responses and forwarded requests; its unread input only grows
// while it is paused, and is refused past the budget instead).
func (cc *clientConn) overShare() bool {
	b := &cc.p.mem
	if b.total.Load() <= b.limit/2 {
		return false
	}
	draining := cc.conn.OutboundBuffered() + cc.buffered
	if cc.up != nil {
		draining += cc.up.OutboundBuffered() + cc.up.InboundBuffered()
	}
	return int64(draining) > b.limit/max(cc.p.active.Load(), 1)
}

// overBudget closes the connection holding the most bytes, unless one is
// already being closed for the budget. The responses it still awaits are
// lost with it, as when a broker disconnects a client.
func (p *Proxy) overBudget() {
	p.mu.Lock()
	if p.mem.victim != nil {
		p.mu.Unlock()
		return
	}
	var big *clientConn
	for c := range p.conns {
		if big == nil || c.held.Load() > big.held.Load() {
			big = c
		}
	}
	p.mem.victim = big
	p.mu.Unlock()
	if big == nil {
		return
	}
	big.onLoop(func() {
		p.m.connsClosed.WithLabelValues("memory").Inc()
		p.log.Warn().Uint64("conn", big.id).Str("remote", big.remote).Int64("held_bytes", big.held.Load()).
			Int64("buffered_bytes", p.mem.total.Load()).Int64("max_buffered_bytes", p.mem.limit).
			Msg("proxy memory budget exhausted; closing the client connection holding the most")
		big.closeWith("memory budget (limits.max-buffered-bytes) exhausted; this connection held the most")
	})
}

// budgetClosed runs when a client connection is gone, under Proxy.mu.
func (p *Proxy) budgetClosed(cc *clientConn) {
	if p.mem.victim == cc {
		p.mem.victim = nil
	}
}

// refuseOversizedLocal closes the connection when the request at the head of
// its input will be decoded by the proxy (an intercepted key and version,
// ApiVersions or SaslHandshake) and its size prefix is above
// MaxInterceptedBytes: such a request would be refused once complete, so it
// is refused from its first 8 bytes instead of being buffered whole, as a
// broker closes a connection whose request is over socket.request.max.bytes.
func (cc *clientConn) refuseOversizedLocal() gnet.Action {
	if cc.reqStreamLeft > 0 {
		return gnet.None // the input starts inside a request
	}
	head, err := cc.inPeek(8)
	if err != nil {
		return gnet.None
	}
	size := kafkaframe.Size(head)
	if size <= cc.p.opts.MaxInterceptedBytes {
		return gnet.None
	}
	key, version := int16(binary.BigEndian.Uint16(head[4:])), int16(binary.BigEndian.Uint16(head[6:]))
	if key != int16(kmsg.ApiVersions) && key != int16(kmsg.SASLHandshake) && cc.p.reg.lookup(key, version) == nil {
		return gnet.None
	}
	p := cc.p
	p.m.frameRejected.WithLabelValues("locally handled request over max-intercepted-bytes").Inc()
	p.log.Warn().Uint64("conn", cc.id).Str("remote", cc.remote).Str("api", kmsg.NameForKey(key)).
		Int16("version", version).Int("size", size).Int("max_intercepted_bytes", p.opts.MaxInterceptedBytes).
		Msg("request handled by the proxy is over max-intercepted-bytes; closing client connection")
	cc.reason = "bad request: over max-intercepted-bytes"
	return gnet.Close
}

// registerBudgetGauge exposes the held bytes.
func (p *Proxy) registerBudgetGauge(reg prometheus.Registerer) {
	if reg == nil {
		return
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamshift_buffered_bytes",
		Help: "Request and response bytes held for client connections (limits.max-buffered-bytes bounds them).",
	}, func() float64 { return float64(p.mem.total.Load()) }))
}

// BufferedBytes is what limits.max-buffered-bytes counts now: request and
// response bytes held for client connections.
func (p *Proxy) BufferedBytes() int64 { return p.mem.total.Load() }
