package cluster

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy/peer"
)

// metrics are the metrics of this instance's share of the cluster:
// its log partitions, and the calls between the instances
// (docs/one-address.md §3). Every label is from a bounded set: api names
// from kmsg, results from peer.Result, kinds from peer.CallKind,
// peers from the cluster map (read when scraped, so a peer that left has
// no series).
type metrics struct {
	changes  prometheus.Counter
	loadTime prometheus.Histogram
	fenced   prometheus.Counter

	// forwarded and forwardTime are this instance's serve calls: the
	// requests of its clients it carried to their group's owner.
	forwarded   *prometheus.CounterVec
	forwardTime *prometheus.HistogramVec
	refused     *prometheus.CounterVec
	// upstream are the owner's upstream calls this instance made: the
	// requests of its serve calls' handlers sent back on the clients' own
	// upstream connections at their origin.
	upstream *prometheus.CounterVec
	// served are the calls other instances made here, by kind.
	served   *prometheus.CounterVec
	inflight *peerInflight
}

// newMetrics makes the metrics; links is read when /metrics is scraped
// (nil: no links yet).
func newMetrics(links func() map[string]peer.LinkStatus) *metrics {
	return &metrics{
		changes: prometheus.NewCounter(prometheus.CounterOpts{Name: "streamshift_cluster_partition_changes_total",
			Help: "Group-log partitions this instance gained or gave up."}),
		loadTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "streamshift_cluster_partition_load_seconds",
			Help: "Time to acquire and replay one group-log partition before its groups are served.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}),
		fenced: prometheus.NewCounter(prometheus.CounterOpts{Name: "streamshift_cluster_partition_fenced_total",
			Help: "Group-log partitions whose writer a newer owner fenced."}),
		forwarded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamshift_cluster_forwarded_total",
			Help: "Client requests this instance carried to their group's owner (each attempt), by api and result: ok, refused (a bound here), link_down, timeout, rerouted (the owner no longer owns the group, nothing done), or the owner's envelope error by its Kafka name (COORDINATOR_NOT_AVAILABLE: busy there, or the time ran out there first)."},
			[]string{"api", "result"}),
		forwardTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "streamshift_cluster_forward_seconds",
			Help:    "Time from sending a client request to its group's owner to the owner's answer (each attempt), by api.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 20)}, []string{"api"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamshift_cluster_forward_refused_total",
			Help: "Calls between streamshift instances refused at once (the client gets COORDINATOR_NOT_AVAILABLE), by reason: inflight and bytes (cluster.max-inflight-per-peer, cluster.max-peer-bytes, on this instance's calls), link_down, link_refused (the instance did not admit this one's link: its SASL credentials, or no READ on the instance group), owner_inflight and owner_bytes (the same bounds on the calls other instances run here)."},
			[]string{"reason"}),
		upstream: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamshift_cluster_upstream_calls_total",
			Help: "Requests this instance, as a group's owner, sent back to the instance a client is connected to, for that client's own upstream connection (authorization probes, rewritten offset commits, forwards), by api and result."},
			[]string{"api", "result"}),
		served: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamshift_cluster_served_calls_total",
			Help: "Calls of other streamshift instances answered here, by kind (serve: their clients' requests of groups owned here; upstream: requests for a client connected here) and result."},
			[]string{"kind", "result"}),
		inflight: &peerInflight{links: links, desc: prometheus.NewDesc("streamshift_cluster_peer_inflight",
			"Calls this instance has waiting on its link to each other instance, by peer (proxy id) and kind.", []string{"peer", "kind"}, nil)},
	}
}

// MetricCollectors are the cluster's metrics as New registers them, of no
// instance: what a dashboard may query of the cluster.
func MetricCollectors() []prometheus.Collector { return newMetrics(nil).collectors() }

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.changes, m.loadTime, m.fenced, m.forwarded, m.forwardTime, m.refused, m.upstream, m.served, m.inflight}
}

// forward counts one serve call of a client request with key, ended by err
// after took.
func (m *metrics) forward(key int16, err error, took time.Duration) {
	api := kmsg.NameForKey(key)
	m.forwarded.WithLabelValues(api, peer.Result(err)).Inc()
	m.forwardTime.WithLabelValues(api).Observe(took.Seconds())
}

// called is the links' Called: the upstream calls this instance made as
// an owner (its serve calls are counted by forward, with the time).
func (m *metrics) called(kind peer.CallKind, key int16, result string) {
	if kind == peer.KindUpstream {
		m.upstream.WithLabelValues(kmsg.NameForKey(key), result).Inc()
	}
}

// peerInflight is streamshift_cluster_peer_inflight, read from the links
// when scraped.
type peerInflight struct {
	desc  *prometheus.Desc
	links func() map[string]peer.LinkStatus
}

func (p *peerInflight) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }

func (p *peerInflight) Collect(ch chan<- prometheus.Metric) {
	if p.links == nil {
		return
	}
	for peer, st := range p.links() {
		for kind, n := range st.Inflight {
			ch <- prometheus.MustNewConstMetric(p.desc, prometheus.GaugeValue, float64(n), peer, kind)
		}
	}
}
