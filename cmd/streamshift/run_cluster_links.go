package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/upstream"
)

// clusterLinks is this instance's end of the instance-to-instance path
// (docs/one-address.md §3): the internal listener, and a link to every
// other instance the cluster map lists with an internal address. The
// listener runs other instances' serve calls on this proxy's interceptors
// and their upstream calls on its client connections; the routes send
// their serve calls over the links (clusterRuntime.Forward).
type clusterLinks struct {
	listener *proxy.PeerListener
	links    *proxy.PeerLinks
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
	metrics *clusterMetrics
}

// startClusterLinks binds the internal listener; the links follow the map
// (watch).
func startClusterLinks(cfg *config.Config, p *proxy.Proxy, log zerolog.Logger) (*clusterLinks, error) {
	var links *proxy.PeerLinks
	m := newClusterMetrics(func() map[string]proxy.PeerLinkStatus { return links.Status() })
	lt := listenerTLS(cfg.TLS)
	dial, err := proxy.PeerDialTLS(lt, cfg.Cluster.TLSCAFile, log)
	if err != nil {
		return nil, err
	}
	// When the upstream wants SASL (the control plane has credentials),
	// links authenticate with the control plane's, and the listener
	// admits only principals that may READ the instance group.
	var auth *proxy.PeerAuth
	linkSASL := controlPlaneSASL(cfg)
	if linkSASL != nil {
		auth = p.PeerAuth(cfg.InstanceGroup())
	}
	links = proxy.NewPeerLinks(proxy.PeerLinkOptions{
		Self:          cfg.ProxyID,
		TLS:           dial,
		SASL:          linkSASL,
		MaxInflight:   cfg.Cluster.MaxInflightPerPeer,
		MaxBytes:      int64(cfg.Cluster.MaxPeerBytes),
		Timeout:       cfg.Cluster.ForwardTimeout,
		MaxFrameBytes: cfg.Limits.MaxFrameBytes,
		DialTimeout:   cfg.UpstreamDialTimeout,
		Refused:       func(reason string) { m.refused.WithLabelValues(reason).Inc() },
		Called:        m.called,
		Log:           log,
	})
	pl, err := proxy.ListenPeers(proxy.PeerListenerOptions{
		Addr:          cfg.ClusterListen(),
		TLS:           lt,
		Auth:          auth,
		Handlers:      p.PeerHandlers(cfg.ProxyID, links),
		MaxInflight:   cfg.Cluster.MaxInflightPerPeer,
		MaxBytes:      int64(cfg.Cluster.MaxPeerBytes),
		MaxFrameBytes: cfg.Limits.MaxFrameBytes,
		Refused:       func(reason string) { m.refused.WithLabelValues("owner_" + reason).Inc() },
		Served:        func(kind proxy.PeerCallKind, result string) { m.served.WithLabelValues(kind.String(), result).Inc() },
		Log:           log,
	})
	if err != nil {
		return nil, err
	}
	internal, err := internalAddress(cfg, pl.Addr())
	if err != nil {
		_ = pl.Close()
		return nil, err
	}
	cl := &clusterLinks{
		listener: pl, self: cfg.ProxyID, internal: internal, links: links, metrics: m,
		p: p, timeout: cfg.Cluster.ForwardTimeout,
		changed: make(chan struct{}, 1),
		stop:    make(chan struct{}),
	}
	log.Info().Str("cluster_listen", pl.Addr().String()).Str("advertised_address", internal).Bool("tls", lt != nil).
		Bool("sasl", auth != nil).Msg("cluster: internal listener for the other instances' links")
	if hook := clusterLinksHook.Load(); hook != nil {
		(*hook)(cfg.ProxyID, cl)
	}
	return cl, nil
}

// clusterLinksHook, set by tests only, is given every instance's links
// when they start: a test closes one instance's internal listener (a peer
// down for the others while the map still names it).
var clusterLinksHook atomic.Pointer[func(proxyID string, cl *clusterLinks)]

// internalAddress is cluster.advertised-address, or the bound listener's
// host (the machine's host name when it is a wildcard) and port.
func internalAddress(cfg *config.Config, bound net.Addr) (string, error) {
	if cfg.Cluster.AdvertisedAddress != "" {
		return cfg.Cluster.AdvertisedAddress, nil
	}
	host, _, err := net.SplitHostPort(cfg.ClusterListen())
	if err != nil {
		return "", fmt.Errorf("cluster.listen %q: %w", cfg.ClusterListen(), err)
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
func (cl *clusterLinks) mapChanged() {
	select {
	case cl.changed <- struct{}{}:
	default:
	}
}

// watch keeps a link to every other instance of the latest map that has an
// internal address, closes the links to instances that left it, and caps
// the versions ApiVersions answers advertise to what every instance of the
// map serves.
func (cl *clusterLinks) watch(current func() upstream.ClusterMap) {
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

func (cl *clusterLinks) close() {
	cl.once.Do(func() {
		close(cl.stop)
		cl.wg.Wait()
		cl.links.Close()
		_ = cl.listener.Close()
	})
}
