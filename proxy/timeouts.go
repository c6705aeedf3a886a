package proxy

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// Two timeouts close client connections that hold a descriptor and buffers
// without using them:
//
//   - RequestTimeout: a request frame whose bytes do not all arrive within
//     it (a client that sent a size and stalled, or trickles its bytes);
//   - ConnectionsMaxIdle: no request arrived and nothing was in flight for
//     that long (Kafka's connections.max.idle.ms).
//
// The forward path never reads the time: gnet's ticker sets a coarse clock
// (Proxy.clock) and sweeps every connection's two atomics; the few that look
// expired are checked again and closed on their own loop.

// timeoutMetrics counts connections closed by a timeout.
type timeoutMetrics struct {
	closed  *prometheus.CounterVec
	request prometheus.Counter
	idle    prometheus.Counter
}

func newTimeoutMetrics(reg prometheus.Registerer) *timeoutMetrics {
	m := &timeoutMetrics{closed: newCounterVec("streamshift_connections_timed_out_total",
		"Client connections closed by limits.request-timeout (a request not received in full) or limits.connections-max-idle, by reason.", "reason")}
	m.request = m.closed.WithLabelValues("request-timeout")
	m.idle = m.closed.WithLabelValues("idle")
	if reg != nil {
		reg.MustRegister(m.closed)
	}
	return m
}

// tickInterval is how often the ticker sets the clock and sweeps: once a
// second, more often for timeouts shorter than a few seconds (tests).
func (p *Proxy) tickInterval() time.Duration {
	d := min(p.opts.RequestTimeout, p.opts.ConnectionsMaxIdle) / 4
	return min(max(d, 10*time.Millisecond), time.Second)
}

// tick runs on gnet's ticker goroutine.
func (p *Proxy) tick() time.Duration {
	now := time.Now().UnixNano()
	p.clock.Store(now)
	p.sweep(now)
	return p.tickInterval()
}

// sweep finds the connections whose request or idle time ran out and has
// their loop check and close them.
func (p *Proxy) sweep(now int64) {
	reqTimeout, idle := int64(p.opts.RequestTimeout), int64(p.opts.ConnectionsMaxIdle)
	p.mu.Lock()
	for cc := range p.conns {
		if since := cc.partialSince.Load(); since != 0 && now-since >= reqTimeout {
			p.expired = append(p.expired, cc)
		} else if now-cc.lastRequest.Load() >= idle {
			p.expired = append(p.expired, cc)
		}
	}
	expired := p.expired
	p.expired = p.expired[:0]
	p.mu.Unlock()
	for _, cc := range expired {
		cc.onLoop(func() { cc.expire(now) })
	}
	clear(expired)
}

// expire closes cc if a timeout ran out, on its loop. A connection that
// looked idle but has work in flight (a long-poll Fetch, a held JoinGroup,
// responses its client has not read yet) starts a new idle period instead.
func (cc *clientConn) expire(now int64) {
	p := cc.p
	if cc.reason != "" {
		// Already closing (gnet closes asynchronously, so the connection
		// stays in p.conns until OnClose): a sweep that ran before OnClose
		// must not count it again.
		return
	}
	if since := cc.partialSince.Load(); since != 0 && now-since >= int64(p.opts.RequestTimeout) {
		p.timeouts.request.Inc()
		cc.closeWith("request not received in full within limits.request-timeout (" + p.opts.RequestTimeout.String() + ")")
		return
	}
	if now-cc.lastRequest.Load() < int64(p.opts.ConnectionsMaxIdle) {
		return
	}
	if cc.ring.len() > 0 || cc.sent.len() > 0 || cc.blocked || cc.streamLeft > 0 || cc.reqStreamLeft > 0 ||
		cc.inBuffered() > 0 || cc.conn.OutboundBuffered() > 0 {
		cc.lastRequest.Store(now)
		return
	}
	p.timeouts.idle.Inc()
	cc.closeWith("idle for limits.connections-max-idle (" + p.opts.ConnectionsMaxIdle.String() + ")")
}

// noteArrival runs on the loop after the client's bytes were read: it
// restarts the idle time when requests arrived, and starts (or stops) the
// request timeout when the head frame is (no longer) incomplete. A frame
// keeps the time its first bytes were seen until it is consumed.
func (cc *clientConn) noteArrival() {
	if cc.closed {
		return
	}
	now := cc.p.clock.Load()
	if cc.requests != cc.seenRequests {
		cc.seenRequests = cc.requests
		cc.lastRequest.Store(now)
	}
	if cc.awaitingBytes() {
		if cc.partialSince.Load() == 0 || cc.partialOf != cc.requests {
			cc.partialOf = cc.requests
			cc.partialSince.Store(now)
		}
	} else if cc.partialSince.Load() != 0 {
		cc.partialSince.Store(0)
	}
}

// awaitingBytes reports whether the client owes the rest of a request: the
// rest of one passed through while arriving, or a head frame not all in
// the buffer. gnet reads every byte the socket has before OnTraffic, so an
// incomplete frame is the client's doing, whatever limit paused reading.
func (cc *clientConn) awaitingBytes() bool {
	if cc.reqStreamLeft > 0 {
		return true
	}
	n := cc.inBuffered() // held outside gnet too (inbound.go)
	switch {
	case n == 0:
		return false
	case n < 4:
		return true
	}
	head, err := cc.inPeek(4)
	if err != nil {
		return true
	}
	return 4+kafkaframe.Size(head) > n
}
