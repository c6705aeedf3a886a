package main

import (
	"net"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/cluster"
	"github.com/streamshift/streamshift/config"
)

// advertisedHost is the host clients are told for this instance: the
// configured one, or the listen host.
func advertisedHost(cfg *config.Config) string {
	if cfg.AdvertisedHost != "" {
		return cfg.AdvertisedHost
	}
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return cfg.Listen
	}
	return host
}

// clusterLinkOptions maps the cluster.* keys onto the links' options: the
// internal listener serves the client listeners' TLS, and the links
// authenticate with the control plane's SASL credentials when it has them.
func clusterLinkOptions(cfg *config.Config, log zerolog.Logger) cluster.LinkOptions {
	return cluster.LinkOptions{
		ProxyID:           cfg.ProxyID,
		Listen:            cfg.ClusterListen(),
		AdvertisedAddress: cfg.Cluster.AdvertisedAddress,
		TLS:               listenerTLS(cfg.TLS),
		CAFile:            cfg.Cluster.TLSCAFile,
		SASL:              controlPlaneSASL(cfg),
		InstanceGroup:     cfg.InstanceGroup(),
		MaxInflight:       cfg.Cluster.MaxInflightPerPeer,
		MaxBytes:          int64(cfg.Cluster.MaxPeerBytes),
		Timeout:           cfg.Cluster.ForwardTimeout,
		MaxFrameBytes:     cfg.Limits.MaxFrameBytes,
		DialTimeout:       cfg.UpstreamDialTimeout,
		Log:               log,
	}
}
