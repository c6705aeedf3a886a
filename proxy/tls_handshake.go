package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// tlsServer is the TLS side of the client listeners: the configuration, the
// bound on concurrent handshakes and their metrics.
type tlsServer struct {
	cfg        *tls.Config
	timeout    time.Duration
	max        int64
	handshakes atomic.Int64 // client handshakes running now
	lastFull   atomic.Int64 // unix nanos of the last "too many handshakes" log

	done     prometheus.Counter
	failed   *prometheus.CounterVec
	refused  prometheus.Counter
	inFlight prometheus.GaugeFunc
}

func newTLSServer(cfg *tls.Config, timeout time.Duration, max int, reg prometheus.Registerer) *tlsServer {
	s := &tlsServer{cfg: cfg, timeout: timeout, max: int64(max),
		done:    newCounter("streamshift_tls_handshakes_total", "Client TLS handshakes completed."),
		failed:  newCounterVec("streamshift_tls_handshake_failures_total", "Client TLS handshakes that failed, by cause.", "cause"),
		refused: newCounter("streamshift_tls_handshakes_refused_total", "Client connections closed at once because tls.max-handshakes were running."),
	}
	s.inFlight = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "streamshift_tls_handshakes_running", Help: "Client TLS handshakes running now."},
		func() float64 { return float64(s.handshakes.Load()) })
	if reg != nil {
		reg.MustRegister(s.done, s.failed, s.refused, s.inFlight)
	}
	return s
}

// acquire takes a handshake slot. Every running handshake holds a goroutine,
// a tls.Conn and at most maxHandshakeBytes of input, so the slots bound what
// a flood of connections that never finish their handshake costs.
func (s *tlsServer) acquire() bool {
	if s.handshakes.Add(1) > s.max {
		s.handshakes.Add(-1)
		s.refused.Inc()
		return false
	}
	return true
}

// startTLS makes cc's connection a TLS server connection and runs its
// handshake; the upstream is dialled only once it succeeded, so clients that
// never finish one cost the brokers nothing.
func (cc *clientConn) startTLS(c gnet.Conn) {
	s := cc.p.tls
	tr := newTLSTransport(c, nil)
	tc := &tlsConn{Conn: c, tr: tr, tc: tls.Server(tr, s.cfg)}
	cc.conn = tc
	go cc.serverHandshake(tc)
}

func (cc *clientConn) serverHandshake(tc *tlsConn) {
	p, s := cc.p, cc.p.tls
	defer s.handshakes.Add(-1)
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	go func() {
		select {
		case <-cc.done: // the client went away mid-handshake
			cancel()
		case <-ctx.Done():
		}
	}()
	err := tc.tc.HandshakeContext(ctx)
	cancel()
	if err != nil {
		cause, hint := handshakeCause(err)
		s.failed.WithLabelValues(cause).Inc()
		// Logged even when the client closed first: a client rejecting
		// the server's certificate sends its alert and closes at once.
		p.log.Warn().Uint64("conn", cc.id).Str("remote", cc.remote).Int32("node", cc.node).
			Str("cause", cause).Str("hint", hint).Err(err).Msg("client TLS handshake failed; closing connection")
		_ = tc.tr.Close()
		cc.onLoop(func() { cc.closeWith("TLS handshake failed: " + cause) })
		return
	}
	s.done.Inc()
	st := tc.tc.ConnectionState()
	ev := p.log.Debug().Uint64("conn", cc.id).Str("version", tls.VersionName(st.Version)).
		Str("cipher", tls.CipherSuiteName(st.CipherSuite)).Str("sni", st.ServerName)
	if len(st.PeerCertificates) > 0 {
		ev = ev.Str("client_subject", st.PeerCertificates[0].Subject.String())
	}
	ev.Msg("client TLS handshake done")
	cc.onLoop(func() {
		tc.tr.loop, tc.handshook = true, true
		// Requests pipelined behind the client's Finished are in tr.hs.
		_ = tc.Wake(nil)
	})
	cc.dial()
}

// tlsTraffic runs in OnTraffic of a TLS client connection: it feeds a running
// handshake, or decrypts what arrived. ready says whether the requests can
// be read.
func (cc *clientConn) tlsTraffic(tc *tlsConn) (act gnet.Action, ready bool) {
	if !tc.handshook {
		if cc.p.draining.Load() {
			cc.reason = "proxy shutting down"
			return gnet.Close, false
		}
		tc.tr.feed(tc.Conn)
		// What is left in gnet's buffer is bounded as a plaintext
		// connection's unread requests are.
		if tc.Conn.InboundBuffered() > cc.p.opts.MaxFrameBytes+2*cc.p.opts.BufferHighWater {
			return cc.reject("client sent too much before its TLS handshake ended", "", -1, -1), false
		}
		return gnet.None, false
	}
	if err := tc.pump(); err != nil {
		// Requests decrypted before the end of the stream still count
		// (a client may send its last request and close_notify at once).
		if act := cc.readRequests(); act != gnet.None {
			return act, false
		}
		cc.reason = tlsReadReason(err)
		return gnet.Close, false
	}
	return gnet.None, true
}

// tlsReadReason names why a TLS stream ended, for the disconnect log.
func tlsReadReason(err error) string {
	if errors.Is(err, net.ErrClosed) || err.Error() == "EOF" {
		return "peer closed the TLS connection"
	}
	return "TLS: " + err.Error()
}

// handshakeCauses are the handshake errors told apart by their message
// alone (crypto/tls and the peers' alerts give them no error type), in the
// order handshakeCause tries them: the first whose substrings the message
// holds one of is the cause.
var handshakeCauses = []struct {
	substrings  []string
	cause, hint string
}{
	{[]string{"unknown certificate authority"}, "unknown-ca", "the client does not trust the CA of tls.cert-file (check its truststore)"},
	{[]string{"expired", "not yet valid"}, "expired", "a certificate is outside its validity period"},
	{[]string{"client didn't provide a certificate", "certificate required"}, "no-client-cert", "tls.client-auth=require and the client sent no certificate"},
	{[]string{"certificate signed by unknown authority"}, "unknown-ca", "the client certificate is not signed by a CA of tls.client-ca-file"},
	// Go and Java clients answer a server certificate of a CA they do not
	// trust with these alerts, not unknown_ca.
	{[]string{"bad certificate", "certificate unknown"}, "bad-certificate", "the client rejected the server certificate: not signed by a CA in its truststore, a name it does not match, or expired"},
	{[]string{"protocol version", "no cipher suite"}, "version", "the client offers no TLS 1.2+ version or cipher suite in common"},
}

// handshakeCause sorts a handshake error into a short cause (a metric label)
// and a hint for the operator reading the log.
func handshakeCause(err error) (cause, hint string) {
	msg := err.Error()
	var rec tls.RecordHeaderError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", "the client did not finish the handshake in tls.handshake-timeout"
	case errors.As(err, &rec) || strings.Contains(msg, "does not look like a TLS handshake"):
		return "not-tls", "the client speaks plaintext (or another protocol) to a TLS listener: set security.protocol=SSL or SASL_SSL"
	}
	for _, c := range handshakeCauses {
		for _, sub := range c.substrings {
			if strings.Contains(msg, sub) {
				return c.cause, c.hint
			}
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, net.ErrClosed) || msg == "EOF" || strings.Contains(msg, "connection reset") {
		return "closed", "the client closed the connection during the handshake (a client that rejects the server certificate may close without saying why: check its truststore)"
	}
	return "other", ""
}

// upstreamHandshake runs the TLS handshake of a dialled upstream socket on the
// dialling goroutine; the enrolled connection then goes on with it on the
// loop (upstreamConn.wrap).
func (uc *upstreamConn) upstreamHandshake(nc net.Conn, base *tls.Config, timeout time.Duration) error {
	cfg, err := upstreamTLSConfig(base, uc.addr)
	if err != nil {
		return err
	}
	tr := newTLSTransport(nil, nc)
	tc := tls.Client(tr, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("TLS handshake with %s: %w", uc.addr, err)
	}
	uc.tls = &tlsConn{tr: tr, tc: tc, handshook: true}
	return nil
}

// wrap returns the connection conn.go sees for the upstream socket c: c
// itself in plaintext, its tlsConn with TLS (bound to c on first use).
func (uc *upstreamConn) wrap(c gnet.Conn) gnet.Conn {
	if uc.tls == nil {
		return c
	}
	if uc.tls.Conn == nil {
		uc.tls.Conn, uc.tls.tr.raw, uc.tls.tr.loop = c, c, true
	}
	return uc.tls
}

// upstreamTLSTraffic decrypts what a TLS upstream sent and reads the
// responses.
func (cc *clientConn) upstreamTLSTraffic(up *tlsConn) gnet.Action {
	err := up.pump()
	// Responses decrypted before the end of the stream go to the client
	// first: a broker answers a failed SaslAuthenticate and closes at once.
	act := cc.readResponses(up)
	if err != nil {
		if !cc.closed {
			cc.closeWith("upstream " + tlsReadReason(err))
		}
		return gnet.Close
	}
	return act
}

// setupTLS loads the listener certificates and warns of an upstream whose
// certificate is not checked.
func (p *Proxy) setupTLS() error {
	// A VerifyConnection of its own checks the chain (upstream-config
	// with ssl.endpoint.identification.algorithm empty): only the name
	// is not checked then.
	if u := p.opts.UpstreamTLS; u != nil && u.InsecureSkipVerify && u.VerifyConnection == nil {
		p.log.Warn().Msg("upstream-tls.insecure-skip-verify: upstream certificates are NOT verified; anyone on the path can read and change the traffic")
	}
	if p.opts.TLS == nil {
		return nil
	}
	files, err := newTLSFiles(*p.opts.TLS, p.log)
	if err != nil {
		return err
	}
	p.tls = newTLSServer(files.serverConfig(), p.opts.TLS.HandshakeTimeout, p.opts.TLS.MaxHandshakes, p.opts.Metrics)
	return nil
}

// logHandshakesFull logs a refused connection at most once a second: a
// flood would otherwise flood the log too.
func (p *Proxy) logHandshakesFull(c gnet.Conn) {
	now := time.Now().UnixNano()
	last := p.tls.lastFull.Load()
	if now-last >= int64(time.Second) && p.tls.lastFull.CompareAndSwap(last, now) {
		p.log.Warn().Str("remote", c.RemoteAddr().String()).Int64("max_handshakes", p.tls.max).
			Msg("too many TLS handshakes running; closing new connections until they finish (see streamshift_tls_handshakes_refused_total)")
	}
}

// upstreamTLSConfig is base for a connection to the broker at addr: its
// certificate is checked against addr's host unless base names one.
func upstreamTLSConfig(base *tls.Config, addr string) (*tls.Config, error) {
	if base.ServerName != "" || base.InsecureSkipVerify {
		return base, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("upstream address %s: %w", addr, err)
	}
	cfg := base.Clone()
	cfg.ServerName = host
	return cfg, nil
}
