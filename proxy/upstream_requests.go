package proxy

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// streamshift_upstream_requests_total{api} counts every request this
// instance sends its brokers: client requests forwarded as they are, its own
// asks on a client's upstream connection (authorization probes, checks of
// served requests) and the requests of its own clients (the node table's
// metadata, and through UpstreamRequestsHook the coordinator's control
// plane: anchor members, internal topics, the group log, the instance
// group). Divided by streamshift_requests_total it says what a served
// request costs the broker. The label is a Kafka api name (or Unknown):
// bounded.

// upstream counts one request of key sent upstream.
func (m *metrics) upstream(key int16) {
	if c, ok := m.upstreamByKey[key]; ok {
		c.Inc()
		return
	}
	m.upstreamUnknown.Inc()
}

// upstreamRequestHook counts the requests a kgo client writes.
type upstreamRequestHook struct{ m *metrics }

var _ kgo.HookBrokerWrite = upstreamRequestHook{}

func (h upstreamRequestHook) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err == nil {
		h.m.upstream(key)
	}
}

// UpstreamRequestsHook is the option that counts a kgo client's requests in
// streamshift_upstream_requests_total: for every client streamshift opens
// to its brokers.
func (p *Proxy) UpstreamRequestsHook() kgo.Opt {
	return kgo.WithHooks(upstreamRequestHook{p.m})
}
