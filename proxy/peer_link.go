package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/streamshift/streamshift/internal/backoff"
	"github.com/streamshift/streamshift/internal/loglimit"
	"github.com/streamshift/streamshift/proxy/peer"
)

// A peer link is this instance's connection to one other instance's
// internal listener (peer_listener.go). It carries this instance's calls of
// every kind as Kafka EnvelopeRequests. Responses may come out of order and
// are matched by the link's correlation id: a JoinGroup the owner holds for
// a rebalance must not stall the heartbeats behind it. Plain net and
// crypto/tls with one reader goroutine per link: there are only N−1 links,
// and the reader may block.

// The reconnect backoff (internal/backoff): doubled from min after each
// failed attempt, up to max; back to min once a connection was up.
const (
	peerBackoffMin = 100 * time.Millisecond
	peerBackoffMax = 5 * time.Second
)

// PeerLinkOptions configure a link (and PeerLinks, every link).
type PeerLinkOptions struct {
	// Self is this instance's proxy id: the client id on the link.
	Self string
	// Peer and Addr are the peer's proxy id and its
	// cluster.advertised-address (PeerLinks sets them per link).
	Peer, Addr string
	// TLS is the dialer's configuration (PeerDialTLS), nil: plaintext. The
	// peer's certificate is checked against the host of Addr.
	TLS *tls.Config
	// SASL is the control plane's mechanism and credentials, which links
	// authenticate with when the upstream uses SASL (peer_auth.go); nil:
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
	// request and its result (PeerResult).
	Called func(kind peer.CallKind, key int16, result string)
	Log    zerolog.Logger
}

func (o *PeerLinkOptions) defaults() {
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

// PeerError is a call that got no answer from the peer's handler: refused
// at once, timed out, its link lost, or answered with an envelope error.
type PeerError struct {
	Peer string
	// Code is the envelope error code, or COORDINATOR_NOT_AVAILABLE for
	// what this side decided (busy, link down or lost, timeout): what the
	// origin answers the client. A call that failed is never resent.
	Code int16
	// Result is what this side decided (PeerRefused, PeerLinkDown,
	// PeerTimeout); "" for the peer's envelope error.
	Result string
	Reason string
}

// The results of a call (PeerResult) that this side decided, beside
// PeerOK and the peer's envelope error codes.
const (
	PeerOK = "ok"
	// PeerRefused: beyond a bound, refused at once, nothing sent.
	PeerRefused = "refused"
	// PeerLinkDown: the link was down, or was lost with the call on it.
	PeerLinkDown = "link_down"
	// PeerTimeout: no answer within the call's time.
	PeerTimeout = "timeout"
	// PeerRerouted: the peer answered envelope NOT_COORDINATOR, nothing
	// done (the origin may send it to the next owner).
	PeerRerouted = "rerouted"
)

// PeerResult names a call's end for metrics, from a bounded set: ok,
// refused, link_down, timeout, rerouted (envelope NOT_COORDINATOR), or the
// Kafka name of the peer's envelope error code (an unknown code is
// UNKNOWN_SERVER_ERROR).
func PeerResult(err error) string {
	if err == nil {
		return PeerOK
	}
	var pe *PeerError
	if !errors.As(err, &pe) {
		return kerr.CoordinatorNotAvailable.Message
	}
	if pe.Result != "" {
		return pe.Result
	}
	return peerCodeResult(pe.Code)
}

// peerCodeResult names an envelope error code as PeerResult does.
func peerCodeResult(code int16) string {
	switch code {
	case 0:
		return PeerOK
	case kerr.NotCoordinator.Code:
		return PeerRerouted
	}
	return kerr.TypedErrorForCode(code).Message
}

func (e *PeerError) Error() string {
	return fmt.Sprintf("call to streamshift instance %q: %s (%s)", e.Peer, e.Reason, kerr.ErrorForCode(e.Code))
}

// PeerErrorCode is the Kafka error code of a failed call, 0 for nil; an
// error that is not a PeerError is COORDINATOR_NOT_AVAILABLE.
func PeerErrorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var pe *PeerError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return kerr.CoordinatorNotAvailable.Code
}

// peerBudget bounds the calls of one kind on one link: how many, and
// their request bytes.
type peerBudget struct {
	mu              sync.Mutex
	n, max          int
	bytes, maxBytes int64
}

// take reserves room for a call of size bytes; it returns the reason it
// cannot, "" when it did.
func (b *peerBudget) take(size int64) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n >= b.max {
		return "inflight"
	}
	if b.bytes+size > b.maxBytes {
		return "bytes"
	}
	b.n++
	b.bytes += size
	return ""
}

func (b *peerBudget) give(size int64) {
	b.mu.Lock()
	b.n--
	b.bytes -= size
	b.mu.Unlock()
}

func (b *peerBudget) inflight() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

type peerResult struct {
	data []byte
	err  error
}

// PeerLink is one link to a peer; NewPeerLink dials it and keeps it up
// until Close.
type PeerLink struct {
	o       PeerLinkOptions
	budgets [peer.Kinds]peerBudget

	mu      sync.Mutex
	conn    net.Conn // nil while the link is down
	corr    int32
	pending map[int32]chan peerResult
	// since is when the link came up (zero while down); lastErr and
	// lastErrAt are why it last went down or failed to come up.
	since     time.Time
	lastErr   string
	lastErrAt time.Time
	// refused is why the peer did not admit the link at the last attempt
	// (CLUSTER_AUTHORIZATION_FAILED), nil once it is up.
	refused *PeerError
	// refusals spaces the refusals' log lines: one per peerWarnEvery.
	refusals loglimit.Limiter

	wmu sync.Mutex // one frame written at a time

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// NewPeerLink starts dialing the peer; calls fail at once until the link
// is up.
func NewPeerLink(o PeerLinkOptions) *PeerLink {
	o.defaults()
	o.Log = o.Log.With().Str("peer", o.Peer).Str("peer_address", o.Addr).Logger()
	l := &PeerLink{o: o, pending: map[int32]chan peerResult{}, done: make(chan struct{})}
	l.refusals.Every = peerWarnEvery
	for i := range l.budgets {
		l.budgets[i].max, l.budgets[i].maxBytes = o.MaxInflight, o.MaxBytes
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	go l.run()
	return l
}

// Up reports whether the link is connected.
func (l *PeerLink) Up() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn != nil
}

// Inflight is the number of calls of a kind waiting on the link.
func (l *PeerLink) Inflight(k peer.CallKind) int { return l.budgets[k].inflight() }

// Close drops the link for good; calls in flight fail.
func (l *PeerLink) Close() {
	l.mu.Lock()
	l.cancel() // under mu: setUp sees it or Close sees the connection
	if l.conn != nil {
		_ = l.conn.Close()
	}
	l.mu.Unlock()
	<-l.done
}

func (l *PeerLink) run() {
	defer close(l.done)
	retry := backoff.Backoff{Min: peerBackoffMin, Max: peerBackoffMax}
	for {
		conn, err := l.connect()
		if err == nil {
			if !l.setUp(conn) {
				return // closed while it connected
			}
			retry.Reset()
			err = l.read(conn)
			l.setDown(conn, err)
		}
		if l.ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		l.lastErr, l.lastErrAt = err.Error(), time.Now()
		l.mu.Unlock()
		pe := notAdmitted(err)
		if pe != nil {
			// Credentials or ACLs must change first: retry slowly.
			retry.Longest()
		}
		wait := retry.Next()
		if pe != nil {
			// Say so at most once per peerWarnEvery.
			l.setRefused(pe)
			if ok, held := l.refusals.Allow(time.Now().UnixNano()); ok {
				l.o.Log.Error().Err(err).Int64("held_since_last_line", held).Dur("backoff", wait).
					Msg("cluster: the streamshift instance did not admit this instance's link; check control-plane.sasl-* and the ACLs")
			}
		} else {
			l.o.Log.Warn().Err(err).Dur("backoff", wait).Msg("cluster: link to a streamshift instance down; reconnecting")
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
func (l *PeerLink) connect() (net.Conn, error) {
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
func (l *PeerLink) checkVersions(conn net.Conn) (wantsSASL bool, err error) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "streamshift", "peer-link"
	r, err := roundTrip(conn, 0, &l.o.Self, req, l.o.MaxFrameBytes)
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

// roundTrip writes req on conn with correlation id corr and reads its
// answer: the exchanges that bring a link up, one at a time.
func roundTrip(conn net.Conn, corr int32, clientID *string, req kmsg.Request, maxFrame int) (kmsg.Response, error) {
	if _, err := conn.Write(appendRequestFrame(nil, corr, clientID, req)); err != nil {
		return nil, err
	}
	msg, err := readPeerFrame(conn, maxFrame)
	if err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(msg)); got != corr {
		return nil, fmt.Errorf("%s answer of correlation id %d, want %d", kmsg.NameForKey(req.Key()), got, corr)
	}
	return decodeResponse(req.Key(), req.GetVersion(), msg)
}

// setUp makes conn the link's, unless Close came first (it closes only
// the connection it finds).
func (l *PeerLink) setUp(conn net.Conn) bool {
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
func (l *PeerLink) setDown(conn net.Conn, err error) {
	_ = conn.Close()
	l.mu.Lock()
	l.conn, l.since = nil, time.Time{}
	pending := l.pending
	l.pending = map[int32]chan peerResult{}
	l.mu.Unlock()
	lost := &PeerError{Peer: l.o.Peer, Code: kerr.CoordinatorNotAvailable.Code, Result: PeerLinkDown, Reason: fmt.Sprintf("link lost: %v", err)}
	for _, ch := range pending {
		ch <- peerResult{err: lost}
	}
}

// read delivers responses to their calls until the connection fails.
func (l *PeerLink) read(conn net.Conn) error {
	br := bufio.NewReader(conn)
	for {
		msg, err := readPeerFrame(br, l.o.MaxFrameBytes)
		if err != nil {
			return fmt.Errorf("reading an answer: %w", err)
		}
		r, err := decodeResponse(int16(kmsg.Envelope), 0, msg)
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
			ch <- peerResult{err: &PeerError{Peer: l.o.Peer, Code: resp.ErrorCode, Reason: "the instance answered the envelope with an error"}}
			continue
		}
		ch <- peerResult{data: resp.ResponseData}
	}
}

// Call sends a request (header and body, without the size prefix) to the
// peer and returns its ResponseData: Start, then Wait.
func (l *PeerLink) Call(ctx context.Context, p peer.ConnPrincipal, requestData []byte, clientIP net.IP, timeout time.Duration) ([]byte, error) {
	return l.Start(ctx, p, requestData, clientIP, timeout).Wait()
}

// PeerPending is a call started on a link; Wait must be called once (it
// gives the call's budget back).
type PeerPending struct {
	l       *PeerLink
	ctx     context.Context
	corr    int32
	kind    peer.CallKind
	key     int16
	ch      chan peerResult
	timeout time.Duration
	// release gives the budget back; err is set when the call failed
	// before it was written.
	release func()
	err     error
}

// Start writes the call on the link before it returns, so calls started
// one after the other from one goroutine reach the peer in that order. p's
// Kind picks the budget; TimeoutMs is set from the time left. timeout ≤ 0
// is the link's Timeout; a shorter ctx deadline wins. A call beyond the
// budget or while the link is down fails at once; a timeout or a lost link
// fails it (Wait); none is resent.
func (l *PeerLink) Start(ctx context.Context, p peer.ConnPrincipal, requestData []byte, clientIP net.IP, timeout time.Duration) *PeerPending {
	pp := &PeerPending{l: l, ctx: ctx, kind: p.Kind, key: -1}
	if len(requestData) >= 2 {
		pp.key = int16(binary.BigEndian.Uint16(requestData))
	}
	if p.Kind < 0 || p.Kind >= peer.Kinds {
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
		pp.err = l.refuse(reason, PeerRefused, fmt.Sprintf("busy: %d %s calls in flight to it, limit %d calls and %d request bytes", b.inflight(), p.Kind, b.max, b.maxBytes))
		return pp
	}
	pp.release = func() { b.give(size) }
	p.TimeoutMs = int32(min(max(timeout.Milliseconds(), 0), 1<<31-1))

	pp.ch = make(chan peerResult, 1)
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
		pp.err = l.refuse("link_down", PeerLinkDown, "link down")
		return pp
	}
	l.corr++
	if l.corr <= 0 {
		l.corr = 1
	}
	pp.corr = l.corr
	l.pending[pp.corr] = pp.ch
	l.mu.Unlock()
	frame := appendRequestFrame(nil, pp.corr, &l.o.Self, peer.EnvelopeRequest(&p, requestData, clientIP))

	if err := l.write(conn, frame, timeout); err != nil {
		l.forget(pp.corr)
		_ = conn.Close() // the reader sees it and takes the link down
		pp.err = &PeerError{Peer: l.o.Peer, Code: kerr.CoordinatorNotAvailable.Code, Result: PeerLinkDown, Reason: fmt.Sprintf("link lost: %v", err)}
	}
	return pp
}

// Wait returns the call's ResponseData, or why there is none.
func (pp *PeerPending) Wait() ([]byte, error) {
	if pp.release != nil {
		defer pp.release()
	}
	data, err := pp.wait()
	if pp.l != nil && pp.l.o.Called != nil {
		pp.l.o.Called(pp.kind, pp.key, PeerResult(err))
	}
	return data, err
}

func (pp *PeerPending) wait() ([]byte, error) {
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
		return nil, &PeerError{Peer: l.o.Peer, Code: kerr.CoordinatorNotAvailable.Code, Result: PeerTimeout, Reason: fmt.Sprintf("no answer within %v", pp.timeout)}
	case <-pp.ctx.Done():
		l.forget(pp.corr)
		return nil, &PeerError{Peer: l.o.Peer, Code: kerr.CoordinatorNotAvailable.Code, Result: PeerTimeout, Reason: pp.ctx.Err().Error()}
	}
}

// refuse fails a call at once: reason is Refused's (the bound), result
// the call's (PeerResult).
func (l *PeerLink) refuse(reason, result, msg string) error {
	if l.o.Refused != nil {
		l.o.Refused(reason)
	}
	return &PeerError{Peer: l.o.Peer, Code: kerr.CoordinatorNotAvailable.Code, Result: result, Reason: msg}
}

func (l *PeerLink) forget(corr int32) {
	l.mu.Lock()
	delete(l.pending, corr)
	l.mu.Unlock()
}

func (l *PeerLink) write(conn net.Conn, frame []byte, timeout time.Duration) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_ = conn.SetWriteDeadline(time.Now().Add(timeout))
	_, err := conn.Write(frame)
	return err
}

// readPeerFrame reads one frame and returns it without its size prefix.
// A frame beyond max (limits.max-frame-bytes, on both ends of a link) is
// refused from its size prefix, before it is allocated or waited for.
func readPeerFrame(r io.Reader, max int) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := frameSize(size[:])
	if n > max {
		return nil, fmt.Errorf("frame of %d bytes beyond the limit of %d (limits.max-frame-bytes)", n, max)
	}
	if n < 4 {
		return nil, fmt.Errorf("invalid frame size %d (under 4 bytes or beyond 2 GiB)", n)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(r, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// PeerLinks keeps one link to every peer of the cluster map.
type PeerLinks struct {
	o     PeerLinkOptions
	mu    sync.Mutex
	links map[string]*PeerLink
}

// NewPeerLinks makes the set; o is every link's options but Peer and Addr.
func NewPeerLinks(o PeerLinkOptions) *PeerLinks {
	return &PeerLinks{o: o, links: map[string]*PeerLink{}}
}

// Update makes the links match peers (proxy id → internal address): links
// to new peers start, links to peers that left or moved close.
func (s *PeerLinks) Update(peers map[string]string) {
	var stale []*PeerLink
	s.mu.Lock()
	for id, l := range s.links {
		if addr, ok := peers[id]; !ok || addr != l.o.Addr {
			stale = append(stale, l)
			delete(s.links, id)
		}
	}
	for id, addr := range peers {
		if s.links[id] == nil {
			o := s.o
			o.Peer, o.Addr = id, addr
			s.links[id] = NewPeerLink(o)
		}
	}
	s.mu.Unlock()
	for _, l := range stale {
		l.Close()
	}
}

// Link is the link to a peer, nil if the map does not name it.
func (s *PeerLinks) Link(peer string) *PeerLink {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.links[peer]
}

// PeerLinkStatus is one link as /cluster shows it.
type PeerLinkStatus struct {
	// Peer is the peer's proxy id, Address its cluster.advertised-address.
	Peer    string `json:"peer"`
	Address string `json:"address"`
	Up      bool   `json:"up"`
	// ConnectedSince is when the link came up; absent while it is down.
	ConnectedSince *time.Time `json:"connectedSince,omitempty"`
	// Inflight is the calls waiting on the link, by kind (serve,
	// upstream, served-groups).
	Inflight map[string]int `json:"inflight"`
	// LastError is why the link last went down or failed to come up, and
	// when; absent if it never did.
	LastError   string     `json:"lastError,omitempty"`
	LastErrorAt *time.Time `json:"lastErrorAt,omitempty"`
}

// Status is the link's state now.
func (l *PeerLink) Status() PeerLinkStatus {
	st := PeerLinkStatus{Peer: l.o.Peer, Address: l.o.Addr, Inflight: make(map[string]int, peer.Kinds)}
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
	for k := peer.CallKind(0); k < peer.Kinds; k++ {
		st.Inflight[k.String()] = l.Inflight(k)
	}
	return st
}

// Status is every link's state, by peer.
func (s *PeerLinks) Status() map[string]PeerLinkStatus {
	s.mu.Lock()
	links := make([]*PeerLink, 0, len(s.links))
	for _, l := range s.links {
		links = append(links, l)
	}
	s.mu.Unlock()
	out := make(map[string]PeerLinkStatus, len(links))
	for _, l := range links {
		out[l.o.Peer] = l.Status()
	}
	return out
}

// Close closes every link.
func (s *PeerLinks) Close() { s.Update(nil) }
