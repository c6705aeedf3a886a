package proxy

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// refreshMetadata asks the upstream for its brokers through the control-plane
// client and records their addresses, so a node-port connection can be dialled
// before any client has seen a Metadata response through this instance (a
// restarted proxy gets connections on node ports clients cached).
func (p *Proxy) refreshMetadata(ctx context.Context) error {
	p.refreshMu.Lock()
	defer p.refreshMu.Unlock()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // no topics: brokers only
	resp, err := req.RequestWith(ctx, p.ctl)
	if err != nil {
		p.m.metadataRefreshes.WithLabelValues("error").Inc()
		return fmt.Errorf("upstream metadata: %w", err)
	}
	for _, b := range resp.Brokers {
		p.nodes.observe(b.NodeID, b.Host, b.Port)
	}
	p.m.metadataRefreshes.WithLabelValues("ok").Inc()
	p.metaOK.Store(true)
	return nil
}

// refreshLoop refreshes the node table every MetadataRefresh, every second
// while no refresh has succeeded yet (not ready until one does). A run of
// failures is logged at spaced intervals (refreshLog), its end once.
func (p *Proxy) refreshLoop(ctx context.Context) {
	period := p.opts.MetadataRefresh
	if !p.metaOK.Load() {
		period = time.Second // not ready yet: retry soon
	}
	t := time.NewTimer(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, 2*p.opts.DialTimeout)
		err := p.refreshMetadata(rctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		period = p.opts.MetadataRefresh
		now := time.Now()
		if err != nil {
			if log, held := p.refreshLog.failed(now); log {
				p.log.Warn().Err(err).Strs("upstream", p.opts.Upstream).Int("failed_since_last_line", held).
					Time("failing_since", p.refreshLog.since).Bool("ready", p.metaOK.Load()).
					Msg("control-plane metadata refresh failed; retrying, logged again at growing intervals while it fails")
			}
			if !p.metaOK.Load() {
				period = time.Second
			}
		} else if ok, failures, took := p.refreshLog.succeeded(now); ok {
			p.log.Info().Strs("upstream", p.opts.Upstream).Int("failures", failures).Dur("failing_for", took).
				Msg("control-plane metadata refresh recovered: the upstream answers again")
		}
		t.Reset(period)
	}
}

// upstreamAddrs returns where a client connection of this listener node goes:
// the bootstrap list (rotated, to spread connections) for the bootstrap
// listener, else the node's upstream address, fetched on demand when this
// instance has not seen the node yet.
func (p *Proxy) upstreamAddrs(node int32) ([]string, error) {
	if node < 0 {
		n := len(p.opts.Upstream)
		start := int(p.bootstrap.Add(1)) % n
		out := make([]string, 0, n)
		for i := range n {
			out = append(out, p.opts.Upstream[(start+i)%n])
		}
		return out, nil
	}
	if addr, ok := p.nodes.lookup(node); ok {
		return []string{addr}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*p.opts.DialTimeout)
	defer cancel()
	if err := p.refreshMetadata(ctx); err != nil {
		return nil, fmt.Errorf("node %d unknown and %w", node, err)
	}
	if addr, ok := p.nodes.lookup(node); ok {
		return []string{addr}, nil
	}
	return nil, fmt.Errorf("node %d is not in the upstream cluster's metadata", node)
}
