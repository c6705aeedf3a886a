package proxy

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/loglimit"
	"github.com/streamshift/streamshift/proxy/peer"
)

// maxResponseBytes bounds an upstream response frame. Brokers size fetch
// responses by the client's fetch.max.bytes (50 MiB by default); a larger
// length means a broken stream.
const maxResponseBytes = 1 << 30

// Options configure a Proxy. Zero values take the documented defaults.
type Options struct {
	// Upstream is the bootstrap list of the real cluster, host:port each.
	Upstream []string
	// Listen is the bootstrap listener, host:port.
	Listen string
	// AdvertisedHost is the host clients are told for every node. Default:
	// Listen's host, which must then be a specific address.
	AdvertisedHost string
	// NodePortBase: node N is served on NodePortBase+N. Default: Listen's
	// port + 1.
	NodePortBase int
	// NodeIDMin and NodeIDMax bound the node ids that get a pre-bound port
	// (gnet cannot add listeners at runtime). No default: zero values are
	// node 0 alone, a one-broker cluster's range (config's default is
	// 0..31); a zero-value default would read a configured 0..0 as unset.
	NodeIDMin, NodeIDMax int32
	// DialTimeout bounds one upstream dial. Default 5s.
	DialTimeout time.Duration
	// MaxFrameBytes caps a request frame (Kafka's socket.request.max.bytes).
	// Default 100 MiB.
	MaxFrameBytes int
	// MaxInterceptedBytes caps a request that is decoded for an interceptor
	// (decoding allocates more than the frame). Default 8 MiB.
	MaxInterceptedBytes int
	// MaxInflight caps forwarded requests awaiting a response per client
	// connection; beyond it the connection is not read. Default 256.
	MaxInflight int
	// BufferHighWater: when a client's unsent responses pass it, its
	// requests stop being forwarded until they drain. Request bytes a client
	// connection holds in the proxy (unconsumed input plus what waits for
	// the upstream socket) are capped at MaxFrameBytes + 2*BufferHighWater;
	// beyond that the client is disconnected. Default 4 MiB.
	BufferHighWater int
	// MaxBufferedBytes bounds the request and response bytes held across
	// all client connections (Kafka's queued.max.request.bytes, budget.go).
	// Default 256 MiB.
	MaxBufferedBytes int
	// MaxAnswerBytes caps one answer the proxy builds itself (a local
	// response, or an interceptor's rewrite of the upstream's): a larger
	// one closes the connection instead of being built (outcome.go).
	// Default 64 MiB, and never above MaxBufferedBytes.
	MaxAnswerBytes int
	// ShutdownTimeout bounds the drain of in-flight requests. Default 30s.
	ShutdownTimeout time.Duration
	// MetadataRefresh is the period of the control-plane metadata fetch that
	// keeps the upstream node table fresh. Default 1m.
	MetadataRefresh time.Duration
	// EventLoops is the number of gnet loops. Default: number of CPUs.
	EventLoops int

	// MaxConnections caps client connections (Kafka's max.connections);
	// one beyond is closed at once. Default, and the most allowed: what the
	// descriptor limit leaves (maxConnectionsFor); a larger value is
	// lowered to it with a warning.
	MaxConnections int
	// MaxConnectionsPerIP caps the client connections from one IP address
	// (Kafka's max.connections.per.ip). Default 0: no limit.
	MaxConnectionsPerIP int
	// RequestTimeout: a request frame whose bytes have not all arrived
	// within it closes the connection. Default 30s.
	RequestTimeout time.Duration
	// ConnectionsMaxIdle: a client connection with no request and nothing
	// in flight for that long is closed (Kafka's connections.max.idle.ms).
	// Default 10m.
	ConnectionsMaxIdle time.Duration

	// ControlPlane are extra options of the proxy's own upstream client
	// (the node-table metadata fetch): the credentials the upstream wants
	// from streamshift itself, such as kgo.SASL or kgo.DialTLSConfig.
	// Client connections never use them: their SASL passes through.
	ControlPlane []kgo.Opt

	// TLS, when set, serves the client listeners over TLS (tls_files.go).
	TLS *TLSListener
	// UpstreamTLS, when set, encrypts every forwarded upstream connection.
	// The proxy's own client takes TLS through ControlPlane
	// (kgo.DialTLSConfig).
	UpstreamTLS *tls.Config

	Log zerolog.Logger
	// ConnLogDebug logs each client connect and disconnect at debug, not
	// info: the demo's clients connect often, and a line each would bury
	// its banner and the lines that matter.
	ConnLogDebug bool
	Metrics      prometheus.Registerer
	Tap          Tap
}

func (o *Options) setDefaults() error {
	if len(o.Upstream) == 0 {
		return errors.New("no upstream bootstrap address")
	}
	host, portStr, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return fmt.Errorf("listen %q: %w", o.Listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port <= 0 || port > 65535 {
		return fmt.Errorf("listen %q: bad port", o.Listen)
	}
	if o.AdvertisedHost == "" {
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			return fmt.Errorf("listen %q binds every address: set the advertised host clients should use", o.Listen)
		}
		o.AdvertisedHost = host
	}
	o.NodePortBase = cmp.Or(o.NodePortBase, port+1)
	if o.NodeIDMin < 0 || o.NodeIDMax < o.NodeIDMin {
		return fmt.Errorf("node id range %d..%d is empty or negative", o.NodeIDMin, o.NodeIDMax)
	}
	lo, hi := o.NodePortBase+int(o.NodeIDMin), o.NodePortBase+int(o.NodeIDMax)
	if lo <= 0 || hi > 65535 {
		return fmt.Errorf("node ports %d..%d (node-port-base %d + node ids %d..%d) are outside 1..65535", lo, hi, o.NodePortBase, o.NodeIDMin, o.NodeIDMax)
	}
	if port >= lo && port <= hi {
		return fmt.Errorf("listen port %d collides with node ports %d..%d", port, lo, hi)
	}
	o.DialTimeout = cmp.Or(o.DialTimeout, 5*time.Second)
	o.MaxFrameBytes = cmp.Or(o.MaxFrameBytes, 100<<20)
	o.MaxInterceptedBytes = cmp.Or(o.MaxInterceptedBytes, 8<<20)
	o.MaxInflight = cmp.Or(o.MaxInflight, 256)
	o.BufferHighWater = cmp.Or(o.BufferHighWater, 4<<20)
	o.MaxBufferedBytes = cmp.Or(o.MaxBufferedBytes, 256<<20)
	o.MaxAnswerBytes = min(cmp.Or(o.MaxAnswerBytes, 64<<20), o.MaxBufferedBytes)
	o.ShutdownTimeout = cmp.Or(o.ShutdownTimeout, 30*time.Second)
	o.MetadataRefresh = cmp.Or(o.MetadataRefresh, time.Minute)
	o.EventLoops = cmp.Or(o.EventLoops, runtime.NumCPU())
	if o.MaxConnections < 0 || o.MaxConnectionsPerIP < 0 || o.RequestTimeout < 0 || o.ConnectionsMaxIdle < 0 {
		return errors.New("connection limits and timeouts must not be negative")
	}
	o.RequestTimeout = cmp.Or(o.RequestTimeout, 30*time.Second)
	o.ConnectionsMaxIdle = cmp.Or(o.ConnectionsMaxIdle, 10*time.Minute)
	if o.TLS != nil {
		o.TLS.HandshakeTimeout = cmp.Or(o.TLS.HandshakeTimeout, 10*time.Second)
		o.TLS.MaxHandshakes = cmp.Or(o.TLS.MaxHandshakes, 1024)
	}
	return nil
}

// Proxy is one streamshift proxy instance.
type Proxy struct {
	opts       Options
	log        zerolog.Logger
	nodes      *nodeTable
	reg        registry
	m          *metrics
	listenHost string
	listenPort int

	mem       memBudget
	ctl       *kgo.Client
	refreshMu sync.Mutex
	// refreshLog spaces the refresh loop's failure lines (refresh_log.go).
	refreshLog refreshLog
	tls        *tlsServer // nil: plaintext listeners

	limits          *connLimits
	timeouts        *timeoutMetrics
	clock           atomic.Int64 // unix nanos, set by the ticker (timeouts.go)
	expired         []*clientConn
	lastAdv         atomic.Pointer[apiTable]        // shared by connections told the same (advertised.go)
	clusterCaps     atomic.Pointer[map[int16]int16] // SetClusterVersions
	unadvertisedLog loglimit.Limiter

	connSeq   atomic.Uint64
	bootstrap atomic.Uint32
	active    atomic.Int64
	draining  atomic.Bool
	booted    atomic.Bool
	metaOK    atomic.Bool
	serving   atomic.Bool            // Run opened the listeners to clients
	startStep atomic.Pointer[string] // Starting: what the start is doing, until serving

	// Set by Listen: the engine's result, the background loops' cancel.
	engineErr  chan error
	engineDone atomic.Bool // engineErr was read
	accepting  *acceptLoops
	stopBg     context.CancelFunc
	stopOnce   sync.Once

	mu    sync.Mutex
	conns map[*clientConn]gnet.Conn // every open client connection, for the drain
	byID  map[uint64]*clientConn    // the same, by id: other instances' upstream calls name theirs (58_envelope.go)
	// incarnation is random per process start: another instance's call
	// naming a connection of an earlier start of this one finds none.
	incarnation int64
	// serveCheck, if set, admits a serve call before any handling
	// (SetServeCheck).
	serveCheck atomic.Pointer[func(partition, mapGeneration int32) bool]
	// servedGroups answers other instances' served-groups calls
	// (SetServedGroups).
	servedGroups atomic.Pointer[ServedGroupsFunc]
	// peerWorkers run serve calls' interceptors (proxy/peer/workers.go).
	peerWorkers *peer.Workers
	// remoteCloses are the close signals of other instances' client
	// connections (peer_conn_closed.go).
	remoteCloses remoteCloses
	wake         map[gnet.Conn]struct{} // paused connections to re-check on the next tick

	engine gnet.Engine
}

// New validates opts and builds a proxy; Run starts it.
func New(opts Options) (*Proxy, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	host, portStr, _ := net.SplitHostPort(opts.Listen)
	port, _ := strconv.Atoi(portStr)
	p := &Proxy{
		opts:        opts,
		log:         opts.Log,
		listenHost:  host,
		listenPort:  port,
		m:           newMetrics(opts.Metrics),
		conns:       make(map[*clientConn]gnet.Conn),
		byID:        make(map[uint64]*clientConn),
		wake:        make(map[gnet.Conn]struct{}),
		incarnation: newIncarnation(),
		peerWorkers: peer.NewWorkers(),
	}
	p.mem.limit = int64(opts.MaxBufferedBytes)
	p.registerBudgetGauge(opts.Metrics)
	p.nodes = newNodeTable(opts.AdvertisedHost, opts.NodePortBase, opts.NodeIDMin, opts.NodeIDMax, opts.Log)
	p.clock.Store(time.Now().UnixNano())
	p.unadvertisedLog.Every = refusalLogInterval
	p.limits = newConnLimits(p.connectionLimit(), opts.MaxConnectionsPerIP, opts.Metrics)
	p.timeouts = newTimeoutMetrics(opts.Metrics)
	if err := p.setupTLS(); err != nil {
		return nil, err
	}
	return p, nil
}

// Register routes requests of key with a version in minVersion..maxVersion to
// i instead of forwarding them. Only registered keys are decoded. With
// advertise, ApiVersions answers include the range even when the upstream
// lacks the key (for keys the upstream has, the union of both ranges). It may
// be called before or while the proxy runs. A key is registered once: a
// second Register or RegisterCapped of it is an error.
func (p *Proxy) Register(key, minVersion, maxVersion int16, advertise bool, i Interceptor) error {
	return p.reg.register(&registration{key: key, minVersion: minVersion, maxVersion: maxVersion, advertise: advertise, i: i})
}

// RegisterCapped is Register for a key whose every request i must see:
// maxVersion also caps what ApiVersions advertises, whatever the upstream
// supports, and a request above it (a client ignoring ApiVersions) is
// refused like any version above the advertised one instead of bypassing i
// upstream.
func (p *Proxy) RegisterCapped(key, minVersion, maxVersion int16, advertise bool, i Interceptor) error {
	return p.reg.register(&registration{key: key, minVersion: minVersion, maxVersion: maxVersion, advertise: advertise, capped: true, i: i})
}

// LimitBody answers requests of a registered key larger than maxBytes (the
// request after its size prefix) with answer's response, encoded at the
// request's version, without decoding them: decoding allocates several times
// a request's size (a StreamsGroupHeartbeat of 6 MiB with 30,000
// subtopologies took about 45 MiB), and a request no valid answer can come of
// is refused as cheaply as it was sent. max-intercepted-bytes still closes
// the connection above its own, larger bound.
func (p *Proxy) LimitBody(key int16, maxBytes int, answer func(version int16, size int) kmsg.Response) error {
	return p.reg.limitBody(key, maxBytes, answer)
}

// controlPlaneOpts are the options of the proxy's own upstream client.
func (p *Proxy) controlPlaneOpts() []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(p.opts.Upstream...), kgo.DialTimeout(p.opts.DialTimeout), p.UpstreamRequestsHook()}
	return append(opts, p.opts.ControlPlane...)
}

// NodeAddr returns the address clients are told for an upstream node.
func (p *Proxy) NodeAddr(node int32) string {
	return net.JoinHostPort(p.opts.AdvertisedHost, strconv.Itoa(p.opts.NodePortBase+int(node)))
}

// Ready reports whether every listener serves new connections and the
// proxy knows the cluster (NotReady says why not).
func (p *Proxy) Ready() bool { return p.NotReady() == "" }

// NotReady says why the proxy is not ready, in the words /readyz answers
// with; empty when it is: every listener accepts and serves (Run started),
// the upstream's brokers are known, and it is not draining.
func (p *Proxy) NotReady() string {
	switch {
	case p.draining.Load():
		return "draining: stopping, finishing the requests in flight"
	case !p.serving.Load():
		step := "binding the listeners"
		if s := p.startStep.Load(); s != nil {
			step = *s
		}
		return "starting: " + step
	case !p.booted.Load():
		return "stopped: the event loops ended"
	case !p.metaOK.Load():
		return "upstream metadata not fetched yet: no broker of the upstream has answered"
	}
	return ""
}

// Starting names the start-up step under way (loading the group log,
// joining the instance group, …), for /readyz until Run serves.
func (p *Proxy) Starting(step string) { p.startStep.Store(&step) }

// Serving reports whether the proxy's loops run and its listeners accept
// clients (Run started).
func (p *Proxy) Serving() bool { return p.booted.Load() && p.serving.Load() }

// stalledAfter: event loops whose ticker has not ticked for this long are
// wedged (it ticks at least once a second, tickInterval); a liveness probe
// should restart the process.
const stalledAfter = 30 * time.Second

// Unhealthy says why the process does not work, in the words /healthz
// answers with; empty while it does. It is liveness only: a proxy still
// starting, waiting for unreachable brokers or draining is healthy, as
// long as its event loops tick (the ticker takes the same lock as the
// loops' connection bookkeeping, so a deadlock there shows).
func (p *Proxy) Unhealthy() string {
	if !p.booted.Load() {
		return "" // no event loops yet (or stopped): the admin server answering is the proof of life
	}
	if since := time.Duration(time.Now().UnixNano() - p.clock.Load()); since > stalledAfter {
		return fmt.Sprintf("event loops stalled: their ticker has not run for %v", since.Round(time.Second))
	}
	return ""
}

// listenAddrs is the bootstrap listener followed by one listener per node id.
func (p *Proxy) listenAddrs() []string {
	addrs := []string{"tcp://" + p.opts.Listen}
	for id := p.opts.NodeIDMin; id <= p.opts.NodeIDMax; id++ {
		addrs = append(addrs, "tcp://"+net.JoinHostPort(p.listenHost, strconv.Itoa(p.opts.NodePortBase+int(id))))
	}
	return addrs
}

// Listen binds every listener (the bootstrap one and one per node id) and
// starts the event loops, but accepts no client connection until Run
// serves: a process binds its ports before it changes anything upstream
// (the group log, the instance group), and a taken port is then an error
// that names it; a client that connects meanwhile waits in the kernel's
// accept queue and is served once Run starts, never closed for being
// early. Run calls Listen if it was not called; Close stops a proxy that
// listened and never ran.
func (p *Proxy) Listen(ctx context.Context) error {
	if p.engineErr != nil {
		return errors.New("proxy already listening")
	}
	ctl, err := kgo.NewClient(p.controlPlaneOpts()...)
	if err != nil {
		return fmt.Errorf("control-plane client: %w", err)
	}
	p.ctl = ctl
	ok := false
	defer func() {
		if !ok {
			ctl.Close()
		}
	}()

	// A node outside the port range at start is a configuration error; later
	// ones are logged by the node table when they appear.
	p.Starting("asking the upstream for its brokers (metadata)")
	startCtx, cancel := context.WithTimeout(ctx, 2*p.opts.DialTimeout)
	err = p.refreshMetadata(startCtx)
	cancel()
	if err != nil {
		p.log.Warn().Err(err).Strs("upstream", p.opts.Upstream).Msg("upstream metadata not available yet; retrying in the background, not ready until it is")
		p.refreshLog.failed(time.Now()) // the refresh loop's next line waits
	} else {
		for id, addr := range p.nodes.snapshot() {
			if !p.nodes.hasPort(id) {
				return fmt.Errorf("upstream node %d (%s) is outside node ids %d..%d that have proxy ports: widen the node id range", id, addr, p.opts.NodeIDMin, p.opts.NodeIDMax)
			}
		}
	}

	// Every listen address is bound before anything else, so a taken port
	// is an error naming it; the accept loops start once Run serves.
	p.Starting("binding the listeners")
	lns, err := p.bindListeners()
	if err != nil {
		return fmt.Errorf("start listeners: %w", err)
	}
	defer func() {
		if !ok {
			for _, l := range lns {
				_ = l.ln.Close()
			}
		}
	}()
	h := &handler{p: p, runCh: make(chan struct{})}
	errCh := make(chan error, 1)
	go func() {
		// Clients reach the loops through Register (listen.go), not through
		// gnet's acceptor: engineAddr only gives the engine something to run.
		errCh <- gnet.Run(h, engineAddr,
			gnet.WithMulticore(true),
			gnet.WithNumEventLoop(p.opts.EventLoops),
			// Register is called from the accept goroutines: RoundRobin's
			// counter is not safe for that, LeastConnections reads atomics.
			gnet.WithLoadBalancing(gnet.LeastConnections),
			gnet.WithTCPNoDelay(gnet.TCPNoDelay),
			gnet.WithTCPKeepAlive(time.Minute),
			gnet.WithReadBufferCap(1<<20),
			gnet.WithLogger(gnetLogger{p.log}),
			gnet.WithReuseAddr(true),
			// OnTick: the coarse clock and the timeout sweep (timeouts.go).
			gnet.WithTicker(true),
		)
	}()
	select {
	case err := <-errCh:
		return fmt.Errorf("start listeners: %w", err)
	case <-h.runCh: // the event loops run: the accept loops may hand them connections
	}
	p.booted.Store(true)
	p.engineErr = errCh
	// Nothing accepts until Run: a client waits in the kernel's queue.
	p.accepting = &acceptLoops{lns: lns}
	bg, stopBg := context.WithCancel(context.Background())
	p.stopBg = stopBg
	go p.wakeLoop(bg)
	go p.refreshLoop(bg)
	go p.reclaimLoop(bg, 10*time.Second)
	ok = true
	return nil
}

// Run serves clients (after Listen, which it calls if it was not) and
// blocks until ctx is cancelled (then drains in-flight requests, at most
// ShutdownTimeout) or the engine fails.
func (p *Proxy) Run(ctx context.Context) error {
	if p.engineErr == nil {
		if err := p.Listen(ctx); err != nil {
			return err
		}
	}
	defer p.Close()
	// Every listener accepts from here on (a connection queued since
	// Listen included), and only then is the proxy ready (/readyz).
	p.accepting.start(p)
	p.serving.Store(true)
	p.log.Info().Str("listen", p.opts.Listen).Str("advertised_host", p.opts.AdvertisedHost).
		Int("node_port_first", p.opts.NodePortBase+int(p.opts.NodeIDMin)).Int("node_port_last", p.opts.NodePortBase+int(p.opts.NodeIDMax)).
		Strs("upstream", p.opts.Upstream).Msg("proxy listening")

	select {
	case err := <-p.engineErr:
		// Nothing restarts the loops: a proxy whose listeners stopped
		// accepting must stop, so that whatever supervises it notices.
		p.engineDone.Store(true)
		p.booted.Store(false)
		if err == nil {
			err = errors.New("no error reported")
		}
		return fmt.Errorf("engine stopped on its own, its event loops serve no more connections (gnet logs why just before): %w", err)
	case <-ctx.Done():
	}
	p.drain()
	return p.Close()
}

// Close stops the engine and the background loops of a proxy that
// listened; Run calls it when it ends. Later calls do nothing.
func (p *Proxy) Close() error {
	var err error
	p.stopOnce.Do(func() {
		if p.engineErr == nil {
			return
		}
		p.accepting.stop() // no new client reaches the loops
		if !p.engineDone.Load() {
			stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			// gnet's Stop checks every 500 ms whether the engine ended;
			// gnet.Run returning (engineErr) says so at once.
			stopped := make(chan error, 1)
			go func() { stopped <- p.engine.Stop(stopCtx) }()
			select {
			case <-p.engineErr:
			case e := <-stopped:
				if e != nil {
					err = fmt.Errorf("stop engine: %w", e)
				} else {
					<-p.engineErr
				}
			}
			cancel() // ends Stop's wait, if still polling
			p.log.Info().Msg("proxy stopped")
		}
		p.booted.Store(false)
		p.stopBg()
		p.ctl.Close()
	})
	return err
}

// drain stops reading new requests, lets in-flight ones finish and closes
// every client connection once its responses are written, waiting at most
// ShutdownTimeout.
func (p *Proxy) drain() {
	p.draining.Store(true)
	n := p.active.Load()
	p.log.Info().Int64("connections", n).Dur("timeout", p.opts.ShutdownTimeout).Msg("draining client connections")
	deadline := time.Now().Add(p.opts.ShutdownTimeout)
	for p.active.Load() > 0 && time.Now().Before(deadline) {
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Wake(nil)
		}
		p.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	if left := p.active.Load(); left > 0 {
		p.log.Warn().Int64("connections", left).Msg("drain timed out; closing remaining connections")
	}
}

// parkConn asks the wake loop to re-run c's OnTraffic soon: gnet has no read
// pause and no writable callback, so a connection that stopped reading
// because a buffer passed its high-water mark polls until it drained.
func (p *Proxy) parkConn(c gnet.Conn) {
	p.mu.Lock()
	p.wake[c] = struct{}{}
	p.mu.Unlock()
}

func (p *Proxy) wakeLoop(ctx context.Context) {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	var batch []gnet.Conn
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p.mu.Lock()
		for c := range p.wake {
			batch = append(batch, c)
		}
		clear(p.wake)
		p.mu.Unlock()
		for _, c := range batch {
			_ = c.Wake(nil) // a stale (closed) conn ignores the wake
		}
		clear(batch)
		batch = batch[:0]
	}
}
