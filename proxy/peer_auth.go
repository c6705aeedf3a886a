package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/streamshift/streamshift/proxy/peer"
)

// PeerAuth is the admission of links through this proxy's upstream: the
// bootstrap list, with the forwarded connections' TLS.
func (p *Proxy) PeerAuth(group string) *peer.Auth {
	return &peer.Auth{Dial: p.dialBootstrap, Group: group}
}

// dialBootstrap connects to the first upstream bootstrap address that
// answers (rotated, as client connections are), with the upstream TLS.
func (p *Proxy) dialBootstrap(ctx context.Context) (net.Conn, error) {
	addrs, err := p.upstreamAddrs(-1)
	if err != nil {
		return nil, err
	}
	var errs []error
	d := net.Dialer{Timeout: p.opts.DialTimeout}
	for _, addr := range addrs {
		nc, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if p.opts.UpstreamTLS != nil {
			cfg, err := upstreamTLSConfig(p.opts.UpstreamTLS, addr)
			if err == nil {
				tc := tls.Client(nc, cfg)
				if err = tc.HandshakeContext(ctx); err == nil {
					return tc, nil
				}
				err = fmt.Errorf("TLS handshake with %s: %w", addr, err)
			}
			_ = nc.Close()
			errs = append(errs, err)
			continue
		}
		return nc, nil
	}
	return nil, fmt.Errorf("upstream bootstrap: %w", errors.Join(errs...))
}
