package proxy

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
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
	connsClosed        *prometheus.CounterVec
	metadataRefreshes  *prometheus.CounterVec

	requests        *prometheus.CounterVec
	requestsByKey   map[int16]prometheus.Counter
	requestsUnknown prometheus.Counter

	upstreamRequests *prometheus.CounterVec
	upstreamByKey    map[int16]prometheus.Counter
	upstreamUnknown  prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		clientConns:        newGauge("streamshift_client_connections", "Open client connections."),
		clientConnsTotal:   newCounter("streamshift_client_connections_total", "Accepted client connections."),
		upstreamConns:      newGauge("streamshift_upstream_connections", "Open upstream connections."),
		upstreamDialFailed: newCounter("streamshift_upstream_dial_failures_total", "Client connections closed because no upstream broker could be reached."),
		frameRejected:      newCounterVec("streamshift_frames_rejected_total", "Client requests rejected by closing the connection, by reason.", "reason"),
		protocolErrors:     newCounter("streamshift_upstream_protocol_errors_total", "Upstream responses that could not be matched or decoded."),
		localResponses:     newCounter("streamshift_local_responses_total", "Responses produced by the proxy itself."),
		intercepted:        newCounter("streamshift_intercepted_requests_total", "Requests handed to a registered interceptor."),
		paused:             newCounter("streamshift_read_pauses_total", "Times a connection stopped being read because a limit was reached."),
		connsClosed:        newCounterVec("streamshift_connections_closed_total", "Client connections the proxy closed to stay within a limit, by reason.", "reason"),
		metadataRefreshes:  newCounterVec("streamshift_metadata_refreshes_total", "Control-plane metadata fetches, by result.", "result"),
		requests:           newCounterVec("streamshift_requests_total", "Client requests, by api.", "api"),
		requestsByKey:      make(map[int16]prometheus.Counter),
		upstreamRequests:   newCounterVec("streamshift_upstream_requests_total", "Requests sent to the brokers: forwarded, asked on a client's connection, and of streamshift's own clients, by api.", "api"),
		upstreamByKey:      make(map[int16]prometheus.Counter),
	}
	for _, k := range kafkaframe.KnownKeys() {
		m.requestsByKey[k] = m.requests.WithLabelValues(kmsg.NameForKey(k))
		m.upstreamByKey[k] = m.upstreamRequests.WithLabelValues(kmsg.NameForKey(k))
	}
	m.requestsUnknown = m.requests.WithLabelValues("Unknown")
	m.upstreamUnknown = m.upstreamRequests.WithLabelValues("Unknown")
	if reg != nil {
		reg.MustRegister(m.clientConns, m.clientConnsTotal, m.upstreamConns, m.upstreamDialFailed,
			m.frameRejected, m.protocolErrors, m.localResponses, m.intercepted, m.paused, m.connsClosed,
			m.metadataRefreshes, m.requests, m.upstreamRequests)
	}
	return m
}

// The constructors below only shorten newMetrics: every series has a name, a help
// text and at most one label.
func newGauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

func newCounter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func newCounterVec(name, help, label string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
}

func (m *metrics) request(key int16) {
	if c, ok := m.requestsByKey[key]; ok {
		c.Inc()
		return
	}
	m.requestsUnknown.Inc()
}
