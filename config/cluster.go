package config

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// Cluster is the instance-to-instance path (docs/one-address.md): each
// instance of a cluster (coordinator.durable-log) listens for the other
// instances' links on an internal listener and keeps a link to each of them,
// so any instance can carry a group request to the group's owner.
type Cluster struct {
	// Listen is the internal listener (empty: the listen host, port 0: a
	// port the system picks, so that nothing binds a fixed port it was not
	// told to and two instances share a host). A fixed port stays possible
	// (network policies name it).
	Listen string `koanf:"listen"`
	// AdvertisedAddress is where the other instances dial this one: its own
	// pod DNS name or IP, never a load balancer (empty: Listen's host, with
	// the machine's host name when it is empty or 0.0.0.0, and the port
	// actually bound). It is published in the instance group, which is how
	// the other instances find this one.
	AdvertisedAddress string `koanf:"advertised-address"`
	// MaxInflightPerPeer and MaxPeerBytes bound the calls of each kind this
	// instance has waiting on one peer, and their request bytes; beyond,
	// the client gets COORDINATOR_NOT_AVAILABLE at once.
	MaxInflightPerPeer int `koanf:"max-inflight-per-peer"`
	MaxPeerBytes       int `koanf:"max-peer-bytes"`
	// ForwardTimeout is a call's time limit: below the clients' 30s
	// request.timeout.ms, so they get an answer rather than time out.
	ForwardTimeout time.Duration `koanf:"forward-timeout"`
	// TLSCAFile: PEM CAs the other instances' certificates must chain to
	// when the listeners speak TLS (empty: the system pool).
	TLSCAFile string `koanf:"tls-ca-file"`
}

// defaultClusterPort is the internal listener's port when cluster.listen
// is not set: any free one. Only the other instances dial it, and they
// read its address from the instance group.
const defaultClusterPort = "0"

// DefaultCluster returns the cluster settings before any source.
func DefaultCluster() Cluster {
	return Cluster{MaxInflightPerPeer: 4096, MaxPeerBytes: 64 << 20, ForwardTimeout: 20 * time.Second}
}

// ClusterListen is the internal listener's address: cluster.listen, or the
// listen host with port 0 (the address bound is logged and published).
func (c *Config) ClusterListen() string {
	if c.Cluster.Listen != "" {
		return c.Cluster.Listen
	}
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		host = ""
	}
	return net.JoinHostPort(host, defaultClusterPort)
}

func (c *Config) validateCluster() []string {
	var errs []string
	k := c.Cluster
	if k.Listen != "" {
		// Port 0 is allowed: the system picks one.
		if _, p, err := net.SplitHostPort(k.Listen); err != nil {
			errs = append(errs, fmt.Sprintf("cluster.listen %q: %v", k.Listen, err))
		} else if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
			errs = append(errs, fmt.Sprintf("cluster.listen %q: port %q is not 0..65535 (0: a free port the system picks)", k.Listen, p))
		}
	}
	if k.AdvertisedAddress != "" {
		if err := checkHostPort(k.AdvertisedAddress, false); err != nil {
			errs = append(errs, fmt.Sprintf("cluster.advertised-address %q: %v (host:port where the other instances reach this one)", k.AdvertisedAddress, err))
		}
	}
	if k.MaxInflightPerPeer < 1 {
		errs = append(errs, fmt.Sprintf("cluster.max-inflight-per-peer: must be >= 1, got %d", k.MaxInflightPerPeer))
	}
	if k.MaxPeerBytes < 1<<20 {
		errs = append(errs, fmt.Sprintf("cluster.max-peer-bytes: must be >= 1048576, got %d", k.MaxPeerBytes))
	}
	if k.ForwardTimeout <= 0 {
		errs = append(errs, fmt.Sprintf("cluster.forward-timeout: must be positive, got %v", k.ForwardTimeout))
	}
	if k.TLSCAFile != "" && !c.TLS.Enabled() {
		errs = append(errs, "cluster.tls-ca-file: the links speak TLS only when the listeners do (tls.cert-file)")
	}
	return errs
}
