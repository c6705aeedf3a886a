package peer

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/streamshift/streamshift/internal/backoff"
	"github.com/streamshift/streamshift/internal/kafkaframe"
	"github.com/streamshift/streamshift/internal/loglimit"
)

// A peer link is this instance's connection to one other instance's
// internal listener (listener.go). It carries this instance's calls of
// every kind as Kafka EnvelopeRequests. Responses may come out of order and
// are matched by the link's correlation id: a JoinGroup the owner holds for
// a rebalance must not stall the heartbeats behind it. Plain net and
// crypto/tls with one reader goroutine per link: there are only N−1 links,
// and the reader may block.

// The reconnect backoff (internal/backoff): doubled from min after each
// failed attempt, up to max; back to min once a connection was up. The
// max is Kafka's reconnect.backoff.max.ms default: a link is back within a
// second of its peer being reachable again. Every group request of the
// clients connected here waits on the link to its owner, and an
// exactly-once app whose TxnOffsetCommit waits past its transaction
// timeout (Kafka Streams: 10 s) is fenced when the broker aborts it; with
// 5 s, a 10 s outage kept the links down for up to 15 s (issue #41's link
// fault). A refused dial costs little: there are N−1 links. A link the
// peer did not admit (credentials, ACLs) retries every refusedBackoff
// instead: each attempt is a SASL exchange and a broker probe at the
// peer, and it will not mend before an operator acts.
const (
	backoffMin     = 100 * time.Millisecond
	backoffMax     = time.Second
	refusedBackoff = 5 * time.Second
)

// LinkOptions configure a link (and Links, every link).
type LinkOptions struct {
	// Self is this instance's proxy id: the client id on the link.
	Self string
	// Peer and Addr are the peer's proxy id and its
	// cluster.advertised-address (Links sets them per link).
	Peer, Addr string
	// TLS is the dialer's configuration (proxy.PeerDialTLS), nil: plaintext. The
	// peer's certificate is checked against the host of Addr.
	TLS *tls.Config
	// SASL is the control plane's mechanism and credentials, which links
	// authenticate with when the upstream uses SASL (link_auth.go); nil:
	// links do not authenticate.
	SASL sasl.Mechanism
	// MaxInflight and MaxBytes bound the calls of each kind waiting on the
	// link (cluster.max-inflight-per-peer, cluster.max-peer-bytes, request
	// bytes): beyond either a call is refused at once. Each kind has its
	// own budget, so leaves never wait behind the calls that wait on them.
	MaxInflight int
	MaxBytes    int64
	// Timeout is a call's default time limit (cluster.forward-timeout).
	Timeout time.Duration
	// MaxFrameBytes bounds a response frame; a larger one drops the link.
	MaxFrameBytes int
	// DialTimeout bounds a dial, the TLS handshake and the ApiVersions
	// exchange that bring a link up.
	DialTimeout time.Duration
	// Refused, if set, is told each call refused at once, by reason
	// ("inflight", "bytes", "link_down", "link_refused").
	Refused func(reason string)
	// Called, if set, is told each call's end: its kind, the key of its
	// request and its result (Result).
	Called func(kind CallKind, key int16, result string)
	Log    zerolog.Logger
}

func (o *LinkOptions) defaults() {
	if o.MaxInflight <= 0 {
		o.MaxInflight = 4096
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 64 << 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 20 * time.Second
	}
	if o.MaxFrameBytes <= 0 {
		o.MaxFrameBytes = 100 << 20
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 5 * time.Second
	}
}

type reply struct {
	data []byte
	err  error
}

// Link is one link to a peer; NewLink dials it and keeps it up
// until Close.
type Link struct {
	o       LinkOptions
	budgets [Kinds]budget

	mu      sync.Mutex
	conn    net.Conn // nil while the link is down
	corr    int32
	pending map[int32]chan reply
	// since is when the link came up (zero while down); lastErr and
	// lastErrAt are why it last went down or failed to come up.
	since     time.Time
	lastErr   string
	lastErrAt time.Time
	// refused is why the peer did not admit the link at the last attempt
	// (CLUSTER_AUTHORIZATION_FAILED), nil once it is up.
	refused *Error
	// refusals spaces the refusals' log lines: one per warnEvery; downs
	// the failed reconnects' (one a second while a peer is unreachable).
	refusals, downs loglimit.Limiter

	wmu sync.Mutex // one frame written at a time

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// NewLink starts dialing the peer; calls fail at once until the link
// is up.
func NewLink(o LinkOptions) *Link {
	o.defaults()
	o.Log = o.Log.With().Str("peer", o.Peer).Str("peer_address", o.Addr).Logger()
	l := &Link{o: o, pending: map[int32]chan reply{}, done: make(chan struct{})}
	l.refusals.Every, l.downs.Every = warnEvery, warnEvery
	for i := range l.budgets {
		l.budgets[i].max, l.budgets[i].maxBytes = o.MaxInflight, o.MaxBytes
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	go l.run()
	return l
}

// Peer is the peer's proxy id.
func (l *Link) Peer() string { return l.o.Peer }

// Self is this instance's proxy id, the link's client id.
func (l *Link) Self() string { return l.o.Self }

// Up reports whether the link is connected.
func (l *Link) Up() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn != nil
}

// Inflight is the number of calls of a kind waiting on the link.
func (l *Link) Inflight(k CallKind) int { return l.budgets[k].inflight() }

// Close drops the link for good; calls in flight fail.
func (l *Link) Close() {
	l.mu.Lock()
	l.cancel() // under mu: setUp sees it or Close sees the connection
	if l.conn != nil {
		_ = l.conn.Close()
	}
	l.mu.Unlock()
	<-l.done
}

func (l *Link) run() {
	defer close(l.done)
	retry := backoff.Backoff{Min: backoffMin, Max: backoffMax}
	refused := backoff.Backoff{Min: refusedBackoff, Max: refusedBackoff}
	for {
		conn, err := l.connect()
		wasUp := false
		if err == nil {
			if !l.setUp(conn) {
				return // closed while it connected
			}
			retry.Reset()
			err = l.read(conn)
			l.setDown(conn, err)
			wasUp = true
		}
		if l.ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		l.lastErr, l.lastErrAt = err.Error(), time.Now()
		l.mu.Unlock()
		pe := notAdmitted(err)
		wait := retry.Next()
		if pe != nil {
			// Credentials or ACLs must change first: retry slowly.
			wait = refused.Next()
		}
		if pe != nil {
			// Say so at most once per warnEvery.
			l.setRefused(pe)
			if ok, held := l.refusals.Allow(time.Now().UnixNano()); ok {
				l.o.Log.Error().Err(err).Int64("held_since_last_line", held).Dur("backoff", wait).
					Msg("cluster: the streamshift instance did not admit this instance's link; check control-plane.sasl-* and the ACLs")
			}
		} else {
			// The loss of a link that was up is always said; the
			// failed attempts after it at most once per warnEvery.
			say, held := wasUp, int64(0)
			if !wasUp {
				say, held = l.downs.Allow(time.Now().UnixNano())
			}
			if say {
				l.o.Log.Warn().Err(err).Int64("held_since_last_line", held).Dur("backoff", wait).Msg("cluster: link to a streamshift instance down; reconnecting")
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-l.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// connect dials, handshakes TLS, checks with ApiVersions that the peer
// serves envelopes, and authenticates when links do.
func (l *Link) connect() (net.Conn, error) {
	ctx, cancel := context.WithTimeout(l.ctx, l.o.DialTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", l.o.Addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", l.o.Addr, err)
	}
	if l.o.TLS != nil {
		cfg := l.o.TLS.Clone()
		if cfg.ServerName == "" {
			host, _, _ := net.SplitHostPort(l.o.Addr)
			cfg.ServerName = host
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("tls handshake with %s: %w", l.o.Addr, err)
		}
		conn = tc
	}
	dl, _ := ctx.Deadline()
	_ = conn.SetDeadline(dl)
	wantsSASL, err := l.checkVersions(conn)
	if err == nil {
		err = l.authenticate(ctx, conn, wantsSASL)
	}
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, nil
}

// checkVersions asks the peer's ApiVersions: an instance that does not
// list Envelope v0 cannot take calls. wantsSASL says whether it lists
// SaslHandshake: its links must authenticate.
func (l *Link) checkVersions(conn net.Conn) (wantsSASL bool, err error) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "streamshift", "peer-link"
	r, err := kafkaframe.RoundTrip(conn, 0, &l.o.Self, req, l.o.MaxFrameBytes)
	if err != nil {
		return false, fmt.Errorf("ApiVersions with %s: %w", l.o.Addr, err)
	}
	resp := r.(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 {
		return false, fmt.Errorf("ApiVersions from %s: %w", l.o.Addr, kerr.ErrorForCode(resp.ErrorCode))
	}
	envelope := false
	for _, k := range resp.ApiKeys {
		switch {
		case k.ApiKey == int16(kmsg.Envelope) && k.MinVersion <= 0 && k.MaxVersion >= 0:
			envelope = true
		case k.ApiKey == int16(kmsg.SASLHandshake):
			wantsSASL = true
		}
	}
	if !envelope {
		return false, fmt.Errorf("%s does not serve Envelope v0: not a streamshift internal listener", l.o.Addr)
	}
	return wantsSASL, nil
}

// setUp makes conn the link's, unless Close came first (it closes only
// the connection it finds).
func (l *Link) setUp(conn net.Conn) bool {
	l.mu.Lock()
	if l.ctx.Err() != nil {
		l.mu.Unlock()
		_ = conn.Close()
		return false
	}
	l.conn, l.since, l.refused = conn, time.Now(), nil
	l.mu.Unlock()
	l.o.Log.Info().Bool("sasl", l.o.SASL != nil).Msg("cluster: link to a streamshift instance up")
	return true
}

// setDown fails every call in flight: a call is never resent, the client
// gets COORDINATOR_NOT_AVAILABLE and retries as after a broker disconnect.
func (l *Link) setDown(conn net.Conn, err error) {
	_ = conn.Close()
	l.mu.Lock()
	l.conn, l.since = nil, time.Time{}
	pending := l.pending
	l.pending = map[int32]chan reply{}
	l.mu.Unlock()
	lost := &Error{Peer: l.o.Peer, Code: kerr.CoordinatorNotAvailable.Code, Result: LinkDown, Reason: fmt.Sprintf("link lost: %v", err)}
	for _, ch := range pending {
		ch <- reply{err: lost}
	}
}

// read delivers responses to their calls until the connection fails.
func (l *Link) read(conn net.Conn) error {
	br := bufio.NewReader(conn)
	for {
		msg, err := kafkaframe.Read(br, l.o.MaxFrameBytes)
		if err != nil {
			return fmt.Errorf("reading an answer: %w", err)
		}
		r, err := kafkaframe.DecodeResponse(int16(kmsg.Envelope), 0, msg)
		if err != nil {
			return err
		}
		corr := int32(binary.BigEndian.Uint32(msg))
		l.mu.Lock()
		ch := l.pending[corr]
		delete(l.pending, corr)
		l.mu.Unlock()
		if ch == nil {
			continue // its call timed out
		}
		resp := r.(*kmsg.EnvelopeResponse)
		if resp.ErrorCode != 0 {
			ch <- reply{err: &Error{Peer: l.o.Peer, Code: resp.ErrorCode, Reason: "the instance answered the envelope with an error"}}
			continue
		}
		ch <- reply{data: resp.ResponseData}
	}
}

// Call sends a request (header and body, without the size prefix) to the
// peer and returns its ResponseData: Start, then Wait.
func (l *Link) Call(ctx context.Context, p ConnPrincipal, requestData []byte, clientIP net.IP, timeout time.Duration) ([]byte, error) {
	return l.Start(ctx, p, requestData, clientIP, timeout).Wait()
}

// Pending is a call started on a link; Wait must be called once (it
// gives the call's budget back).
type Pending struct {
	l       *Link
	ctx     context.Context
	corr    int32
	kind    CallKind
	key     int16
	ch      chan reply
	timeout time.Duration
	// release gives the budget back; err is set when the call failed
	// before it was written.
	release func()
	err     error
}

// Failed is a call that failed before any link took it (no link to the
// instance): its Wait returns err.
func Failed(err error) *Pending { return &Pending{err: err} }

// Start writes the call on the link before it returns, so calls started
// one after the other from one goroutine reach the peer in that order. p's
// Kind picks the budget; TimeoutMs is set from the time left. timeout ≤ 0
// is the link's Timeout; a shorter ctx deadline wins. A call beyond the
// budget or while the link is down fails at once; a timeout or a lost link
// fails it (Wait); none is resent.
func (l *Link) Start(ctx context.Context, p ConnPrincipal, requestData []byte, clientIP net.IP, timeout time.Duration) *Pending {
	pp := &Pending{l: l, ctx: ctx, kind: p.Kind, key: -1}
	if len(requestData) >= 2 {
		pp.key = int16(binary.BigEndian.Uint16(requestData))
	}
	if p.Kind < 0 || p.Kind >= Kinds {
		pp.err = fmt.Errorf("call to streamshift instance %q: unknown kind %d", l.o.Peer, p.Kind)
		return pp
	}
	if timeout <= 0 {
		timeout = l.o.Timeout
	}
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	pp.timeout = timeout
	b := &l.budgets[p.Kind]
	size := int64(len(requestData))
	if reason := b.take(size); reason != "" {
		pp.err = l.refuse(reason, Refused, fmt.Sprintf("busy: %d %s calls in flight to it, limit %d calls and %d request bytes", b.inflight(), p.Kind, b.max, b.maxBytes))
		return pp
	}
	pp.release = func() { b.give(size) }
	p.TimeoutMs = int32(min(max(timeout.Milliseconds(), 0), 1<<31-1))

	pp.ch = make(chan reply, 1)
	l.mu.Lock()
	conn, refused := l.conn, l.refused
	if conn == nil {
		l.mu.Unlock()
		if refused != nil {
			// The client gets COORDINATOR_NOT_AVAILABLE with this
			// reason (route/cluster.go): retriable, and it says why.
			if l.o.Refused != nil {
				l.o.Refused("link_refused")
			}
			pp.err = refused
			return pp
		}
		pp.err = l.refuse("link_down", LinkDown, "link down")
		return pp
	}
	l.corr++
	if l.corr <= 0 {
		l.corr = 1
	}
	pp.corr = l.corr
	l.pending[pp.corr] = pp.ch
	l.mu.Unlock()
	frame := kafkaframe.AppendRequest(nil, pp.corr, &l.o.Self, EnvelopeRequest(&p, requestData, clientIP))

	if err := l.write(conn, frame, timeout); err != nil {
		l.forget(pp.corr)
		_ = conn.Close() // the reader sees it and takes the link down
		pp.err = &Error{Peer: l.o.Peer, Code: kerr.CoordinatorNotAvailable.Code, Result: LinkDown, Reason: fmt.Sprintf("link lost: %v", err)}
	}
	return pp
}

// Wait returns the call's ResponseData, or why there is none.
func (pp *Pending) Wait() ([]byte, error) {
	if pp.release != nil {
		defer pp.release()
	}
	data, err := pp.wait()
	if pp.l != nil && pp.l.o.Called != nil {
		pp.l.o.Called(pp.kind, pp.key, Result(err))
	}
	return data, err
}

func (pp *Pending) wait() ([]byte, error) {
	if pp.err != nil {
		return nil, pp.err
	}
	l := pp.l
	t := time.NewTimer(pp.timeout)
	defer t.Stop()
	select {
	case r := <-pp.ch:
		return r.data, r.err
	case <-t.C:
		l.forget(pp.corr)
		return nil, &Error{Peer: l.o.Peer, Code: kerr.CoordinatorNotAvailable.Code, Result: Timeout, Reason: fmt.Sprintf("no answer within %v", pp.timeout)}
	case <-pp.ctx.Done():
		l.forget(pp.corr)
		return nil, &Error{Peer: l.o.Peer, Code: kerr.CoordinatorNotAvailable.Code, Result: Timeout, Reason: pp.ctx.Err().Error()}
	}
}

// refuse fails a call at once: reason is Refused's (the bound), result
// the call's (Result).
func (l *Link) refuse(reason, result, msg string) error {
	if l.o.Refused != nil {
		l.o.Refused(reason)
	}
	return &Error{Peer: l.o.Peer, Code: kerr.CoordinatorNotAvailable.Code, Result: result, Reason: msg}
}

func (l *Link) forget(corr int32) {
	l.mu.Lock()
	delete(l.pending, corr)
	l.mu.Unlock()
}

func (l *Link) write(conn net.Conn, frame []byte, timeout time.Duration) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_ = conn.SetWriteDeadline(time.Now().Add(timeout))
	_, err := conn.Write(frame)
	return err
}

// Status is the link's state now.
func (l *Link) Status() LinkStatus {
	st := LinkStatus{Peer: l.o.Peer, Address: l.o.Addr, Inflight: make(map[string]int, Kinds)}
	l.mu.Lock()
	st.Up = l.conn != nil
	if st.Up {
		since := l.since
		st.ConnectedSince = &since
	}
	if l.lastErr != "" {
		at := l.lastErrAt
		st.LastError, st.LastErrorAt = l.lastErr, &at
	}
	l.mu.Unlock()
	for k := CallKind(0); k < Kinds; k++ {
		st.Inflight[k.String()] = l.Inflight(k)
	}
	return st
}
