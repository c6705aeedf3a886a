package proxy

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Interceptor decides what happens to a request of a key it is registered for
// (Proxy.Register). Intercept is called off the gnet loops, on a goroutine of
// its own, with a decoded request the interceptor owns. It must eventually call
// exactly one method of out, from any goroutine; until then the client
// connection reads no further request, as a Kafka broker mutes a connection
// while one of its requests is in progress. Later requests of the same
// connection are therefore never reordered around an intercepted one.
type Interceptor interface {
	Intercept(req *Request, out Outcome)
}

// InterceptorFunc adapts a function to Interceptor.
type InterceptorFunc func(req *Request, out Outcome)

// Intercept calls f.
func (f InterceptorFunc) Intercept(req *Request, out Outcome) { f(req, out) }

// ClientInfo identifies the client connection a request arrived on.
type ClientInfo struct {
	// ConnID is unique per client connection for the life of the process.
	ConnID uint64
	// RemoteAddr is the client's address.
	RemoteAddr string
	// Node is the upstream node id of the listener the client connected to,
	// -1 for the bootstrap listener.
	Node int32
	// ClientID is the client id of the request's header.
	ClientID string
	// SoftwareName and SoftwareVersion are what the client sent in
	// ApiVersions v3+ (KIP-511), empty if it did not.
	SoftwareName, SoftwareVersion string
	// Principal is the principal the broker authenticated the client's
	// upstream connection as, as far as streamshift can tell
	// (sasl_principal.go): "User:alice" after a SASL PLAIN or SCRAM
	// exchange, TransportPrincipal without SASL, "" when unknown (another
	// mechanism, or a client of another instance). Answers the broker gave
	// on one connection hold for every connection of the same Principal.
	Principal string
}

// Remote says whether the client is connected to another instance: its
// request came in a serve call.
func (c ClientInfo) Remote() bool { return c.ConnID&(1<<63) != 0 }

// Request is an intercepted request.
type Request struct {
	Client        ClientInfo
	Key, Version  int16
	CorrelationID int32
	// Body is decoded at Version and owned by the interceptor. A hop sees
	// it nil (hop.go): Decode decodes it.
	Body kmsg.Request

	// frame is the request as its client sent it (header and body, no
	// size prefix), for one read from a client connection: a serve call
	// sends these bytes, not Body encoded again. bodyAt is where its body
	// starts; malformed is told of a body Decode cannot read.
	frame     []byte
	bodyAt    int
	malformed func(error)

	conn ClientConn // for Ask, Send and Done
}

// NewRequest is a request of body (at its version) that arrived on conn:
// the proxy builds one per intercepted request; a test builds one on a
// connection of its own (package proxytest) to run a handler without
// sockets.
func NewRequest(conn ClientConn, client ClientInfo, corr int32, body kmsg.Request) *Request {
	return &Request{Client: client, Key: body.Key(), Version: body.GetVersion(), CorrelationID: corr, Body: body, conn: conn}
}

// Done is closed when the client connection closes; a response given after
// that is dropped.
func (r *Request) Done() <-chan struct{} {
	if r.conn == nil {
		return nil // never closes: a request of no connection
	}
	return r.conn.Done()
}

// ConnClosed is closed when the client connection closes, also for a
// client of another instance, whose Done ends with the serve call: there it
// closes when the origin tells so, and stays open while that is unknown
// (peer_conn_closed.go). nil for a request of no connection.
func (r *Request) ConnClosed() <-chan struct{} {
	if rc, ok := r.conn.(interface{ connClosed() <-chan struct{} }); ok {
		return rc.connClosed()
	}
	return r.Done()
}

// ConnClosedAt is when ConnClosed closed (zero while open), so that what
// counts from a close counts from it, not from when a watcher first looked
// (a takeover carries members whose connections closed before it). nil if
// the connection does not record it (a test's).
func (r *Request) ConnClosedAt() func() time.Time {
	if rc, ok := r.conn.(interface{ connClosedAt() func() time.Time }); ok {
		return rc.connClosedAt()
	}
	return nil
}

// ClientConn is the client connection an intercepted request arrived on, as
// its handler reaches it: the proxy's own connection (clientConn), a test's
// (package proxytest), and later one held by another streamshift instance
// and reached over a link (docs/one-address.md, remoteConn). How the
// request is completed is the Outcome's, not the connection's.
type ClientConn interface {
	// Ask writes req, its version set, on the client's own upstream
	// connection after every request that connection sent already, so the
	// broker answers for the client's principal, and delivers the broker's
	// answer on the returned channel once (the channel is buffered: nobody
	// has to read it). Ask must not block on the broker.
	Ask(req kmsg.Request) <-chan AskAnswer
	// Done is closed when the client connection closes.
	Done() <-chan struct{}
}

// AskAnswer is the broker's answer to an ask: the response body encoded at
// the ask's version (after the response header), or why there is none.
type AskAnswer struct {
	Body []byte
	Err  error
}

// Outcome completes an intercepted request. Exactly one method is called once;
// later calls are ignored and logged.
type Outcome interface {
	// Respond answers the client locally. resp is encoded at the request's
	// version (its own version is overwritten) with the right header.
	Respond(resp kmsg.Response)
	// Forward sends the original request bytes upstream untouched.
	Forward()
	// ForwardRewritten sends req, encoded at version with the original
	// correlation and client ids, on this client's own upstream connection,
	// so the broker applies the client's principal (ACLs, quotas). The
	// upstream response is decoded at version; onResponse, if not nil, may
	// transform it (it runs off the loops, must not block for long, and may
	// return a response of the same key), and the result is encoded at the
	// client's request version.
	ForwardRewritten(req kmsg.Request, version int16, onResponse func(kmsg.Response) kmsg.Response)
}

// registration is one Register call.
type registration struct {
	key        int16
	minVersion int16
	maxVersion int16
	advertise  bool
	// capped: maxVersion is also the highest version advertised and
	// accepted (RegisterCapped).
	capped bool
	i      Interceptor
	// bodyLimit, when positive, is the largest request (after its size
	// prefix) that is decoded; a larger one is answered by oversize
	// without being decoded (LimitBody).
	bodyLimit int
	oversize  func(version int16, size int) kmsg.Response
	// hop, when set, sees the key's requests undecoded first
	// (RegisterHop).
	hop Hop
}

// registry holds the interceptors, one per key: a key registered twice is
// refused. It is read on every request, so lookups go through an immutable
// snapshot swapped atomically on Register.
type registry struct {
	mu   sync.Mutex
	snap atomic.Pointer[map[int16]*registration]
}

func (r *registry) register(reg *registration) error {
	req := kmsg.RequestForKey(reg.key)
	if req == nil {
		return fmt.Errorf("register api key %d: unknown to kmsg, cannot be decoded", reg.key)
	}
	name := kmsg.NameForKey(reg.key)
	if reg.minVersion < 0 || reg.minVersion > reg.maxVersion {
		return fmt.Errorf("register %s: bad version range %d..%d", name, reg.minVersion, reg.maxVersion)
	}
	if reg.maxVersion > req.MaxVersion() {
		return fmt.Errorf("register %s: max version %d above kmsg's %d", name, reg.maxVersion, req.MaxVersion())
	}
	if reg.i == nil {
		return fmt.Errorf("register %s: nil interceptor", name)
	}
	if reg.key == int16(kmsg.ApiVersions) {
		return fmt.Errorf("register %s: ApiVersions is handled by the proxy itself", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	next := make(map[int16]*registration)
	if cur := r.snap.Load(); cur != nil {
		// A second registration would silently replace the first, and which
		// handler serves the key would depend on call order.
		if _, dup := (*cur)[reg.key]; dup {
			return fmt.Errorf("register %s (key %d): already registered", name, reg.key)
		}
		for k, v := range *cur {
			next[k] = v
		}
	}
	next[reg.key] = reg
	r.snap.Store(&next)
	return nil
}

// limitBody sets the body limit of a registered key (Proxy.LimitBody).
func (r *registry) limitBody(key int16, maxBytes int, answer func(version int16, size int) kmsg.Response) error {
	if maxBytes <= 0 || answer == nil {
		return fmt.Errorf("limit %s: want a positive size and an answer", kmsg.NameForKey(key))
	}
	return r.update(key, "limit", func(reg *registration) { reg.bodyLimit, reg.oversize = maxBytes, answer })
}

// update changes the registration of a registered key (what names the
// change in its error) in a new snapshot.
func (r *registry) update(key int16, what string, change func(*registration)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.snap.Load()
	if cur == nil || (*cur)[key] == nil {
		return fmt.Errorf("%s %s (key %d): not registered", what, kmsg.NameForKey(key), key)
	}
	next := make(map[int16]*registration, len(*cur))
	for k, v := range *cur {
		next[k] = v
	}
	reg := *next[key]
	change(&reg)
	next[key] = &reg
	r.snap.Store(&next)
	return nil
}

// lookup returns the registration serving this key and version, if any.
func (r *registry) lookup(key, version int16) *registration {
	m := r.snap.Load()
	if m == nil {
		return nil
	}
	reg := (*m)[key]
	if reg == nil || version < reg.minVersion || version > reg.maxVersion {
		return nil
	}
	return reg
}

// cappedAbove reports whether version of key is above the cap of a capped
// registration, and the cap.
func (r *registry) cappedAbove(key, version int16) (int16, bool) {
	m := r.snap.Load()
	if m == nil {
		return 0, false
	}
	reg := (*m)[key]
	if reg == nil || !reg.capped || version <= reg.maxVersion {
		return 0, false
	}
	return reg.maxVersion, true
}

// apiVersionsRegs returns the registrations that change ApiVersions answers:
// the advertised and the capped ones.
func (r *registry) apiVersionsRegs() []*registration {
	m := r.snap.Load()
	if m == nil {
		return nil
	}
	var out []*registration
	for _, reg := range *m {
		if reg.advertise || reg.capped {
			out = append(out, reg)
		}
	}
	return out
}
