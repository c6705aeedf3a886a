package cluster

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/proxy/peer"
	"github.com/streamshift/streamshift/upstream"
)

// Links is this instance's end of the instance-to-instance path
// (docs/one-address.md §3): the internal listener, and a link to every
// other instance the cluster map lists with an internal address. The
// listener runs other instances' serve calls on this proxy's interceptors
// and their upstream calls on its client connections; the routes send
// their serve calls over the links (Runtime.Forward).
type Links struct {
	listener *peer.Listener
	links    *peer.Links
	p        *proxy.Proxy
	// timeout is cluster.forward-timeout.
	timeout time.Duration
	self    string
	// internal is where the other instances dial this one.
	internal string

	changed chan struct{}
	stop    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
	// metrics are the cluster's (registered with the runtime's).
	metrics *metrics
}

// LinkOptions are what StartLinks builds the links from: the cluster.*
// keys and what the links share with the proxy's listeners.
type LinkOptions struct {
	// ProxyID is this instance's proxy id.
	ProxyID string
	// Listen is cluster.listen; AdvertisedAddress cluster.advertised-address
	// (empty: the bound listener's host and port).
	Listen, AdvertisedAddress string
	// TLS is the client listeners' TLS (tls.*), nil when plaintext: the
	// internal listener serves it, and the links dial with it, trusting
	// CAFile (cluster.tls-ca-file).
	TLS    *proxy.TLSListener
	CAFile string
	// SASL is the control plane's mechanism and credentials, nil without:
	// with it the links authenticate, and the listener admits only
	// principals that may READ InstanceGroup.
	SASL          sasl.Mechanism
	InstanceGroup string
	// MaxInflight and MaxBytes are cluster.max-inflight-per-peer and
	// cluster.max-peer-bytes; Timeout cluster.forward-timeout.
	MaxInflight int
	MaxBytes    int64
	Timeout     time.Duration
	// MaxFrameBytes is limits.max-frame-bytes; DialTimeout the upstream
	// dial timeout.
	MaxFrameBytes int
	DialTimeout   time.Duration
	Log           zerolog.Logger
	// Listening, for tests only, is given the internal listener once it
	// is bound: a test closes it (a peer down for the others while the
	// map still names it).
	Listening func(*peer.Listener)
}

// StartLinks binds the internal listener; the links follow the map
// (watch) once the runtime joined.
func StartLinks(p *proxy.Proxy, o LinkOptions) (*Links, error) {
	var links *peer.Links
	m := newMetrics(func() map[string]peer.LinkStatus { return links.Status() })
	lt := o.TLS
	dial, err := proxy.PeerDialTLS(lt, o.CAFile, o.Log)
	if err != nil {
		return nil, err
	}
	// When the upstream wants SASL (the control plane has credentials),
	// links authenticate with the control plane's, and the listener
	// admits only principals that may READ the instance group.
	var auth *peer.Auth
	if o.SASL != nil {
		auth = p.PeerAuth(o.InstanceGroup)
	}
	links = peer.NewLinks(peer.LinkOptions{
		Self:          o.ProxyID,
		TLS:           dial,
		SASL:          o.SASL,
		MaxInflight:   o.MaxInflight,
		MaxBytes:      o.MaxBytes,
		Timeout:       o.Timeout,
		MaxFrameBytes: o.MaxFrameBytes,
		DialTimeout:   o.DialTimeout,
		Refused:       func(reason string) { m.refused.WithLabelValues(reason).Inc() },
		Called:        m.called,
		Log:           o.Log,
	})
	listen, err := proxy.PeerListenTLS(lt, o.Log)
	if err != nil {
		return nil, err
	}
	var handshake time.Duration
	if lt != nil {
		handshake = lt.HandshakeTimeout
	}
	pl, err := peer.Listen(peer.ListenerOptions{
		Addr:             o.Listen,
		TLS:              listen,
		HandshakeTimeout: handshake,
		Auth:             auth,
		Handlers:         p.PeerHandlers(o.ProxyID, links),
		MaxInflight:      o.MaxInflight,
		MaxBytes:         o.MaxBytes,
		MaxFrameBytes:    o.MaxFrameBytes,
		Refused:          func(reason string) { m.refused.WithLabelValues("owner_" + reason).Inc() },
		Served:           func(kind peer.CallKind, result string) { m.served.WithLabelValues(kind.String(), result).Inc() },
		Log:              o.Log,
	})
	if err != nil {
		return nil, err
	}
	internal, err := internalAddress(o.Listen, o.AdvertisedAddress, pl.Addr())
	if err != nil {
		_ = pl.Close()
		return nil, err
	}
	cl := &Links{
		listener: pl, self: o.ProxyID, internal: internal, links: links, metrics: m,
		p: p, timeout: o.Timeout,
		changed: make(chan struct{}, 1),
		stop:    make(chan struct{}),
	}
	o.Log.Info().Str("cluster_listen", pl.Addr().String()).Str("advertised_address", internal).Bool("tls", lt != nil).
		Bool("sasl", auth != nil).Msg("cluster: internal listener for the other instances' links")
	if o.Listening != nil {
		o.Listening(pl)
	}
	return cl, nil
}

// internalAddress is cluster.advertised-address, or the bound listener's
// host (the machine's host name when it is a wildcard) and port.
func internalAddress(listen, advertised string, bound net.Addr) (string, error) {
	if advertised != "" {
		return advertised, nil
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("cluster.listen %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if host, err = os.Hostname(); err != nil {
			return "", fmt.Errorf("cluster.advertised-address: not set, and the host name is unknown: %w", err)
		}
	}
	port := 0
	if tcp, ok := bound.(*net.TCPAddr); ok {
		port = tcp.Port
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

// mapChanged is the instance group's MapChanged: it only wakes watch.
func (cl *Links) mapChanged() {
	select {
	case cl.changed <- struct{}{}:
	default:
	}
}

// watch keeps a link to every other instance of the latest map that has an
// internal address, closes the links to instances that left it, and caps
// the versions ApiVersions answers advertise to what every instance of the
// map serves.
func (cl *Links) watch(current func() upstream.ClusterMap) {
	cl.wg.Add(1)
	go func() {
		defer cl.wg.Done()
		for {
			select {
			case <-cl.stop:
				return
			case <-cl.changed:
			}
			m := current()
			cl.p.SetClusterVersions(m.ServedVersions())
			cl.links.Update(peersOf(m, cl.self))
		}
	}()
}

// peersOf is the other instances of m with an internal address, by proxy id.
func peersOf(m upstream.ClusterMap, self string) map[string]string {
	peers := map[string]string{}
	for id, in := range m.Instances {
		if id != self && in.Internal != "" {
			peers[id] = in.Internal
		}
	}
	return peers
}

// Close stops following the map, closes the links and the internal
// listener. The runtime closes its links; Close is for links whose
// runtime was never built (a start that failed before it).
func (cl *Links) Close() {
	cl.once.Do(func() {
		close(cl.stop)
		cl.wg.Wait()
		cl.links.Close()
		_ = cl.listener.Close()
	})
}
