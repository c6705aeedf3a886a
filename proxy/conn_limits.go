package proxy

import (
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamshift/streamshift/internal/loglimit"
)

// connLimits bound the client connections, as Kafka's max.connections and
// max.connections.per.ip do: a connection beyond them is accepted and closed
// at once on the accept goroutine (listen.go), before any event loop or
// upstream dial, so it costs one descriptor for a moment and nothing
// upstream. Its counts are under Proxy.mu.
type connLimits struct {
	max   int // 0 < max: derived from the descriptor limit or configured
	perIP int // 0: no limit
	open  int // connections admitted and not closed yet
	byIP  map[netip.Addr]int

	refused     *prometheus.CounterVec
	refusedMax  prometheus.Counter
	refusedIP   prometheus.Counter
	refusedFDs  prometheus.Counter  // accept or the hand-over to a loop failed
	refusedLogs [3]loglimit.Limiter // one line per interval per reason
}

// Reasons of streamshift_connections_refused_total.
const (
	refusedMaxConnections = "max-connections"
	refusedPerIP          = "max-connections-per-ip"
	// refusedDescriptors counts accepts that failed (EMFILE, ENFILE: the
	// connection waits in the kernel's queue) and admitted connections that
	// could not be handed to an event loop (closed).
	refusedDescriptors = "descriptors"
)

func newConnLimits(max, perIP int, reg prometheus.Registerer) *connLimits {
	l := &connLimits{max: max, perIP: perIP, byIP: make(map[netip.Addr]int),
		refused: newCounterVec("streamshift_connections_refused_total",
			"Client connections closed at once because limits.max-connections or limits.max-connections-per-ip was reached, or accepts that failed for want of descriptors (descriptors: the connection waits in the kernel's queue and is accepted after a pause), by reason.", "reason"),
	}
	l.refusedMax = l.refused.WithLabelValues(refusedMaxConnections)
	l.refusedIP = l.refused.WithLabelValues(refusedPerIP)
	l.refusedFDs = l.refused.WithLabelValues(refusedDescriptors)
	for i := range l.refusedLogs {
		l.refusedLogs[i].Every = refusalLogInterval
	}
	if reg != nil {
		reg.MustRegister(l.refused)
	}
	return l
}

// refusalLogInterval spaces the log lines about refused connections: a flood
// of connections must not become a flood of log lines.
const refusalLogInterval = 10 * time.Second

// admit counts a new client connection from ip, or refuses it (logged at
// most once per interval per reason) when a limit is reached.
func (p *Proxy) admit(ip netip.Addr) bool {
	l := p.limits
	p.mu.Lock()
	reason := ""
	switch {
	case l.open >= l.max:
		reason = refusedMaxConnections
	case l.perIP > 0 && l.byIP[ip] >= l.perIP:
		reason = refusedPerIP
	default:
		l.open++
		if l.perIP > 0 {
			l.byIP[ip]++
		}
	}
	open, fromIP := l.open, l.byIP[ip]
	p.mu.Unlock()
	if reason == "" {
		return true
	}
	i, limit, counter := 0, l.max, l.refusedMax
	if reason == refusedPerIP {
		i, limit, counter = 1, l.perIP, l.refusedIP
	}
	counter.Inc()
	if ok, held := l.refusedLogs[i].Allow(p.clock.Load()); ok {
		ev := p.log.Warn().Str("limit", "limits."+reason).Int("max", limit).Int("open", open)
		if l.perIP > 0 {
			ev = ev.Int("open_from_ip", fromIP)
		}
		ev.Str("remote_ip", ip.String()).Int64("refused_since_last_line", held).
			Msg("client connection refused (closed at once): connection limit reached")
	}
	return false
}

// release uncounts an admitted connection; p.mu must be held.
func (p *Proxy) releaseLocked(ip netip.Addr) {
	l := p.limits
	l.open--
	if l.perIP > 0 {
		if n := l.byIP[ip] - 1; n > 0 {
			l.byIP[ip] = n
		} else {
			delete(l.byIP, ip)
		}
	}
}

// connectionLimit settles MaxConnections against the descriptor limit
// (raised to the hard limit first) and logs both.
func (p *Proxy) connectionLimit() int {
	n := p.opts.MaxConnections
	nofile, err := raiseFileLimit()
	if err != nil {
		p.log.Warn().Err(err).Msg("descriptor limit (RLIMIT_NOFILE) unknown; limits.max-connections is not checked against it")
		if n == 0 {
			n = maxConnectionsFor(1024, len(p.listenAddrs()), defaultSomaxconn)
		}
		p.opts.MaxConnections = n
		return n
	}
	allowed := maxConnectionsFor(nofile, len(p.listenAddrs()), acceptBacklog())
	switch {
	case n == 0:
		n = allowed
	case n > allowed:
		p.log.Warn().Int("configured", n).Int("allowed", allowed).Uint64("nofile", nofile).
			Msg("limits.max-connections needs more descriptors than RLIMIT_NOFILE leaves (2 per client connection, plus listeners, accept backlog and 256 for the rest); lowered to what it allows")
		n = allowed
	}
	p.log.Info().Uint64("nofile", nofile).Int("max_connections", n).Int("max_connections_per_ip", p.opts.MaxConnectionsPerIP).
		Dur("request_timeout", p.opts.RequestTimeout).Dur("connections_max_idle", p.opts.ConnectionsMaxIdle).
		Msg("client connection limits")
	p.opts.MaxConnections = n
	return n
}
