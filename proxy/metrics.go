package proxy

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metrics are the proxy's Prometheus series. Per-request counters are resolved
// per api key once so the hot path is one atomic add.
type metrics struct {
	clientConns        prometheus.Gauge
	clientConnsTotal   prometheus.Counter
	upstreamConns      prometheus.Gauge
	upstreamDialFailed prometheus.Counter
	frameRejected      *prometheus.CounterVec
	protocolErrors     prometheus.Counter
	localResponses     prometheus.Counter
	intercepted        prometheus.Counter
	paused             prometheus.Counter
	metadataRefreshes  *prometheus.CounterVec

	requests        *prometheus.CounterVec
	requestsByKey   map[int16]prometheus.Counter
	requestsUnknown prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		clientConns: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streamshift_client_connections", Help: "Open client connections.",
		}),
		clientConnsTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamshift_client_connections_total", Help: "Accepted client connections.",
		}),
		upstreamConns: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streamshift_upstream_connections", Help: "Open upstream connections.",
		}),
		upstreamDialFailed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamshift_upstream_dial_failures_total", Help: "Client connections closed because no upstream broker could be reached.",
		}),
		frameRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamshift_frames_rejected_total", Help: "Client requests rejected by closing the connection, by reason.",
		}, []string{"reason"}),
		protocolErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamshift_upstream_protocol_errors_total", Help: "Upstream responses that could not be matched or decoded.",
		}),
		localResponses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamshift_local_responses_total", Help: "Responses produced by the proxy itself.",
		}),
		intercepted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamshift_intercepted_requests_total", Help: "Requests handed to a registered interceptor.",
		}),
		paused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamshift_read_pauses_total", Help: "Times a connection stopped being read because a limit was reached.",
		}),
		metadataRefreshes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamshift_metadata_refreshes_total", Help: "Control-plane metadata fetches, by result.",
		}, []string{"result"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamshift_requests_total", Help: "Client requests, by api.",
		}, []string{"api"}),
		requestsByKey: make(map[int16]prometheus.Counter),
	}
	for k := range flexibleFrom {
		m.requestsByKey[k] = m.requests.WithLabelValues(kmsg.NameForKey(k))
	}
	m.requestsUnknown = m.requests.WithLabelValues("Unknown")
	if reg != nil {
		reg.MustRegister(m.clientConns, m.clientConnsTotal, m.upstreamConns, m.upstreamDialFailed,
			m.frameRejected, m.protocolErrors, m.localResponses, m.intercepted, m.paused,
			m.metadataRefreshes, m.requests)
	}
	return m
}

func (m *metrics) request(key int16) {
	if c, ok := m.requestsByKey[key]; ok {
		c.Inc()
		return
	}
	m.requestsUnknown.Inc()
}
