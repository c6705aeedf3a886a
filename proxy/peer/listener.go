package peer

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
	"github.com/streamshift/streamshift/internal/loglimit"
)

// The internal listener (cluster.listen) takes the other instances' links
// (link.go). It is plain net and crypto/tls, not gnet: there are only
// N−1 links in, each with one reader goroutine and a goroutine per call,
// and both may block. It accepts only ApiVersions, Envelope v0 and, when
// links authenticate (listener_auth.go), SaslHandshake v1 and SaslAuthenticate;
// any other key closes the connection, as Kafka closes a connection
// sending a key its listener does not serve. Keep its port off the load
// balancer.

// Handler starts one call and returns where its answer will come. It
// runs on the link's reader and must not block: what it starts before it
// returns is started in the order the link brought the calls (an owner's
// asks and forwards for one request reach the client's upstream connection
// in the order the owner made them). ctx ends at the call's deadline (the
// origin's TimeoutMs) or when the listener closes; an answer after that is
// dropped and the call answered COORDINATOR_NOT_AVAILABLE.
type Handler func(ctx context.Context, c *Call) <-chan Answer

// Answer is a call's answer: the ResponseData (a response header and
// body, byte for byte what a client would get), or an envelope error code
// with nothing done.
type Answer struct {
	Data []byte
	Code int16
}

// BlockingHandler adapts a handler that may block: it runs on a
// goroutine of its own.
func BlockingHandler(f func(ctx context.Context, c *Call) ([]byte, int16)) Handler {
	return func(ctx context.Context, c *Call) <-chan Answer {
		ch := make(chan Answer, 1)
		go func() {
			data, code := f(ctx, c)
			ch <- Answer{Data: data, Code: code}
		}()
		return ch
	}
}

// ListenerOptions configure the internal listener.
type ListenerOptions struct {
	// Addr is cluster.listen.
	Addr string
	// TLS is the client listeners' server configuration (nil:
	// plaintext): the same reloaded certificate, and client certificates
	// checked as theirs (proxy.PeerListenTLS builds it).
	TLS *tls.Config
	// HandshakeTimeout bounds an inbound TLS handshake (default 10s; the
	// client listeners' tls handshake timeout).
	HandshakeTimeout time.Duration
	// Auth, when set, admits only links that authenticate as a principal
	// that may READ the instance group (the upstream uses SASL); nil: the
	// network and TLS are the guard.
	Auth *Auth
	// Handlers run the calls of each kind; a kind without one is answered
	// UNSUPPORTED_VERSION (this release cannot do it).
	Handlers map[CallKind]Handler
	// MaxInflight and MaxBytes bound the running calls of each kind per
	// link; beyond either a call is answered COORDINATOR_NOT_AVAILABLE,
	// nothing done, and the link keeps being read, so leaves still flow.
	MaxInflight int
	MaxBytes    int64
	// MaxFrameBytes bounds a request frame; a larger one closes the link.
	MaxFrameBytes int
	// MaxLinks bounds the inbound links open at once (default 64: one per
	// other instance is the need); one beyond is closed at once, so a
	// stranger reaching the port cannot make the instance hold a goroutine
	// and call budgets per connection without end.
	MaxLinks int
	// Refused, if set, is told each call refused by a budget ("inflight",
	// "bytes").
	Refused func(reason string)
	// Served, if set, is told each call answered, by kind, with its
	// result as the caller's Result names it (ok, refused by a budget
	// or for an answer beyond MaxFrameBytes, timeout, rerouted, or the
	// envelope error's Kafka name). An envelope whose principal does not
	// decode has no kind and is not told.
	Served func(kind CallKind, result string)
	Log    zerolog.Logger
}

// Listener is the internal listener.
type Listener struct {
	o  ListenerOptions
	ln net.Listener

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	// warns spaces accept's warnings: one line per warnEvery.
	warns loglimit.Limiter
}

// warnEvery spaces the listener's warnings (accept failures, links
// refused): a flood or EMFILE must not flood the log.
const warnEvery = 10 * time.Second

// warn logs msg at most once per warnEvery, with how many were held.
func (pl *Listener) warn(err error, msg string) {
	if ok, held := pl.warns.Allow(time.Now().UnixNano()); ok {
		pl.o.Log.Warn().Err(err).Int64("held_since_last_line", held).Msg(msg)
	}
}

// Listen binds the internal listener and starts accepting links.
func Listen(o ListenerOptions) (*Listener, error) {
	if o.MaxInflight <= 0 {
		o.MaxInflight = 4096
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 64 << 20
	}
	if o.MaxFrameBytes <= 0 {
		o.MaxFrameBytes = 100 << 20
	}
	if o.MaxLinks <= 0 {
		o.MaxLinks = 64
	}
	if o.Auth != nil && o.Auth.Timeout <= 0 {
		a := *o.Auth
		a.Timeout = 10 * time.Second
		o.Auth = &a
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	pl := &Listener{o: o, conns: map[net.Conn]struct{}{}}
	pl.warns.Every = warnEvery
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("cluster.listen %s: %w", o.Addr, err)
	}
	pl.ln = ln
	pl.ctx, pl.cancel = context.WithCancel(context.Background())
	pl.wg.Add(1)
	go pl.accept()
	return pl, nil
}

// Addr is the bound address.
func (pl *Listener) Addr() net.Addr { return pl.ln.Addr() }

// Close stops accepting, closes every link and waits for their calls.
func (pl *Listener) Close() error {
	pl.cancel()
	err := pl.ln.Close()
	pl.mu.Lock()
	for c := range pl.conns {
		_ = c.Close()
	}
	pl.mu.Unlock()
	pl.wg.Wait()
	return err
}

func (pl *Listener) accept() {
	defer pl.wg.Done()
	for {
		conn, err := pl.ln.Accept()
		if err != nil {
			if pl.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			pl.warn(err, "cluster: accepting a link failed (out of descriptors?); accepting again after a pause")
			time.Sleep(10 * time.Millisecond)
			continue
		}
		pl.mu.Lock()
		if pl.ctx.Err() != nil {
			pl.mu.Unlock()
			_ = conn.Close()
			return
		}
		if len(pl.conns) >= pl.o.MaxLinks {
			pl.mu.Unlock()
			_ = conn.Close()
			pl.warn(fmt.Errorf("%d links open", pl.o.MaxLinks), "cluster: inbound link refused (closed at once): the internal listener's link limit is reached; is cluster.listen reachable from outside the instances?")
			continue
		}
		pl.conns[conn] = struct{}{}
		pl.mu.Unlock()
		pl.wg.Add(1)
		go pl.serve(conn)
	}
}

// inbound is one inbound link.
type inbound struct {
	pl      *Listener
	conn    net.Conn
	log     zerolog.Logger
	budgets [Kinds]budget
	wmu     sync.Mutex
	// auth is the link's authentication until it is admitted; nil once
	// it is, or when links do not authenticate.
	auth *linkAuth
}

func (pl *Listener) serve(raw net.Conn) {
	defer pl.wg.Done()
	defer func() {
		_ = raw.Close()
		pl.mu.Lock()
		delete(pl.conns, raw)
		pl.mu.Unlock()
	}()
	pc := &inbound{pl: pl, conn: raw, log: pl.o.Log.With().Str("remote", raw.RemoteAddr().String()).Logger()}
	for i := range pc.budgets {
		pc.budgets[i].max, pc.budgets[i].maxBytes = pl.o.MaxInflight, pl.o.MaxBytes
	}
	if pl.o.TLS != nil {
		tc := tls.Server(raw, pl.o.TLS)
		ctx, cancel := context.WithTimeout(pl.ctx, pl.o.HandshakeTimeout)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			pc.log.Warn().Err(err).Msg("cluster: TLS handshake of a link failed")
			return
		}
		pc.conn = tc
	}
	if a := pl.o.Auth; a != nil {
		pc.auth = &linkAuth{o: a, deadline: time.Now().Add(a.Timeout)}
		defer func() {
			if pc.auth != nil {
				pc.auth.close()
			}
		}()
		_ = pc.conn.SetReadDeadline(pc.auth.deadline)
	}
	// Calls still running when the link ends answer into a closed
	// connection; the listener's Close waits for them.
	ctx, cancel := context.WithCancel(pl.ctx)
	defer cancel()
	err := pc.read(ctx)
	var refused *linkRefused
	switch {
	case err == nil || pl.ctx.Err() != nil:
	case errors.As(err, &refused):
		pl.warn(fmt.Errorf("%s: %w", pc.conn.RemoteAddr(), err), "cluster: refused a link: only the instances of this cluster, authenticated with their control-plane credentials, may link")
	default:
		pc.log.Info().Err(err).Msg("cluster: a link from another instance closed")
	}
}

// read takes requests until the link fails or sends what it must not.
func (pc *inbound) read(ctx context.Context) error {
	br := bufio.NewReader(pc.conn)
	for {
		msg, err := kafkaframe.Read(br, pc.pl.o.MaxFrameBytes)
		if err != nil {
			return err
		}
		h, err := kafkaframe.ParseRequestHeader(msg)
		if err != nil {
			return fmt.Errorf("request header: %w", err)
		}
		switch h.Key {
		case int16(kmsg.ApiVersions):
			if err := pc.write(kafkaframe.AppendResponse(nil, h.Corr, apiVersions(h.Version, pc.pl.o.Auth != nil))); err != nil {
				return err
			}
		case int16(kmsg.SASLHandshake), int16(kmsg.SASLAuthenticate):
			if pc.auth == nil {
				return fmt.Errorf("%s v%d: the link does not authenticate now", kmsg.NameForKey(h.Key), h.Version)
			}
			step := pc.saslHandshake
			if h.Key == int16(kmsg.SASLAuthenticate) {
				step = pc.saslAuthenticate
			}
			if err := step(h, msg); err != nil {
				return err
			}
		case int16(kmsg.Envelope):
			if pc.auth != nil {
				if err := pc.answer(h.Corr, EnvelopeError(kerr.ClusterAuthorizationFailed.Code)); err != nil {
					return err
				}
				return &linkRefused{"an envelope before the link authenticated (links authenticate with the control plane's SASL credentials); answered CLUSTER_AUTHORIZATION_FAILED"}
			}
			if err := pc.envelope(ctx, h, msg); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s v%d is not served on the internal listener", kmsg.NameForKey(h.Key), h.Version)
		}
	}
}

// apiVersions is the listener's ApiVersions answer: a version it does
// not know gets v0 UNSUPPORTED_VERSION with the versions it has, as Kafka
// answers. The SASL keys are listed when links authenticate: a dialer
// learns there whether it must.
func apiVersions(version int16, sasl bool) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{
		{ApiKey: int16(kmsg.ApiVersions), MinVersion: 0, MaxVersion: 3},
		{ApiKey: int16(kmsg.Envelope), MinVersion: 0, MaxVersion: 0},
	}
	if sasl {
		resp.ApiKeys = append(resp.ApiKeys,
			kmsg.ApiVersionsResponseApiKey{ApiKey: int16(kmsg.SASLHandshake), MinVersion: 1, MaxVersion: 1},
			kmsg.ApiVersionsResponseApiKey{ApiKey: int16(kmsg.SASLAuthenticate), MinVersion: 0, MaxVersion: 2})
	}
	if version < 0 || version > 3 {
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return resp
	}
	resp.Version = version
	return resp
}

// envelope opens one envelope and starts its call; only a body that does
// not decode ends the link (Kafka closes a connection whose request does
// not parse).
func (pc *inbound) envelope(ctx context.Context, h kafkaframe.Header, msg []byte) error {
	if h.Version != 0 {
		return pc.answer(h.Corr, EnvelopeError(kerr.UnsupportedVersion.Code))
	}
	req := kmsg.NewPtrEnvelopeRequest()
	if err := req.ReadFrom(msg[h.BodyAt:]); err != nil {
		return fmt.Errorf("decode Envelope v0: %w", err)
	}
	opened, code, err := openEnvelope(req)
	if err != nil {
		pc.log.Warn().Err(err).Int16("error_code", code).Msg("cluster: refused an envelope")
		return pc.answer(h.Corr, EnvelopeError(code))
	}
	call := opened
	kind := call.Principal.Kind
	handler := pc.pl.o.Handlers[kind]
	if handler == nil {
		pc.served(kind, codeResult(kerr.UnsupportedVersion.Code))
		return pc.answer(h.Corr, EnvelopeError(kerr.UnsupportedVersion.Code))
	}
	if call.Principal.TimeoutMs <= 0 {
		// Expired on the way: the origin has given up.
		pc.served(kind, Timeout)
		return pc.answer(h.Corr, EnvelopeError(kerr.CoordinatorNotAvailable.Code))
	}
	b := &pc.budgets[kind]
	size := int64(len(msg))
	if reason := b.take(size); reason != "" {
		if pc.pl.o.Refused != nil {
			pc.pl.o.Refused(reason)
		}
		pc.served(kind, Refused)
		return pc.answer(h.Corr, EnvelopeError(kerr.CoordinatorNotAvailable.Code))
	}
	cctx, cancel := context.WithTimeout(ctx, time.Duration(call.Principal.TimeoutMs)*time.Millisecond)
	answer := handler(cctx, &call)
	pc.pl.wg.Add(1)
	go func() {
		defer pc.pl.wg.Done()
		defer b.give(size)
		defer cancel()
		var a Answer
		result := ""
		select {
		case a = <-answer:
			result = codeResult(a.Code)
		case <-cctx.Done():
			a.Code, result = kerr.CoordinatorNotAvailable.Code, Timeout
		}
		resp := EnvelopeError(a.Code)
		if a.Code == 0 {
			resp.ResponseData = a.Data
		}
		frame := kafkaframe.AppendResponse(nil, h.Corr, resp)
		if len(frame)-4 > pc.pl.o.MaxFrameBytes {
			// The origin (same limits.max-frame-bytes) would drop
			// the link on it, failing every call on it: only this
			// one fails, retriable, as a call beyond a bound.
			pc.log.Warn().Int("answer_bytes", len(frame)-4).Int("limit", pc.pl.o.MaxFrameBytes).Str("kind", kind.String()).
				Msg("cluster: an answer beyond limits.max-frame-bytes was not sent; the call is answered COORDINATOR_NOT_AVAILABLE")
			frame = kafkaframe.AppendResponse(nil, h.Corr, EnvelopeError(kerr.CoordinatorNotAvailable.Code))
			result = Refused
		}
		pc.served(kind, result)
		if err := pc.write(frame); err != nil {
			// The link's reader sees the broken connection too.
			pc.log.Debug().Err(err).Msg("cluster: answering an envelope")
		}
	}()
	return nil
}

func (pc *inbound) served(kind CallKind, result string) {
	if pc.pl.o.Served != nil {
		pc.pl.o.Served(kind, result)
	}
}

func (pc *inbound) answer(corr int32, resp kmsg.Response) error {
	return pc.write(kafkaframe.AppendResponse(nil, corr, resp))
}

// writeTimeout bounds one answer's write: a peer that stops reading
// loses the link rather than holding every call's goroutine.
const writeTimeout = 30 * time.Second

func (pc *inbound) write(frame []byte) error {
	pc.wmu.Lock()
	defer pc.wmu.Unlock()
	_ = pc.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := pc.conn.Write(frame); err != nil {
		_ = pc.conn.Close()
		return err
	}
	return nil
}

// openEnvelope checks an envelope as Kafka's broker does before it handles
// the wrapped request, and returns the envelope error code to answer when
// it fails: PRINCIPAL_DESERIALIZATION_FAILURE for a principal that does not
// read (Kafka's code for a failed principal serde), INVALID_REQUEST for a
// client address that is not 4 or 16 bytes, or wrapped bytes without a
// readable request header or themselves an envelope.
func openEnvelope(req *kmsg.EnvelopeRequest) (Call, int16, error) {
	var c Call
	if err := c.Principal.ReadFrom(req.RequestPrincipal); err != nil {
		return c, kerr.PrincipalDeserializationFailure.Code, err
	}
	if n := len(req.ClientHostAddress); n != net.IPv4len && n != net.IPv6len {
		return c, kerr.InvalidRequest.Code, fmt.Errorf("envelope client address: %d bytes, want 4 or 16", n)
	}
	c.ClientIP = net.IP(req.ClientHostAddress)
	h, err := kafkaframe.ParseRequestHeader(req.RequestData)
	if err != nil {
		return c, kerr.InvalidRequest.Code, fmt.Errorf("envelope request data: %w", err)
	}
	if h.Key == int16(kmsg.Envelope) {
		return c, kerr.InvalidRequest.Code, errors.New("envelope request data: an envelope inside an envelope")
	}
	c.RequestData, c.Key, c.Version, c.Corr = req.RequestData, h.Key, h.Version, h.Corr
	return c, 0, nil
}
