package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamshift/streamshift/upstream/anchor"
)

// registerAnchorMetrics registers the anchors' gauges and the expired
// groups' counter.
func registerAnchorMetrics(reg prometheus.Registerer, anchors *anchor.Manager, expired prometheus.Counter) {
	if reg == nil {
		return
	}
	lane := func(name string, read func(anchor.Stats) int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "streamshift_anchor_tasks_running", ConstLabels: prometheus.Labels{"lane": name},
			Help: "Anchor heartbeats and joins running now, by lane (each bounded by coordinator.anchor-max-inflight)."},
			func() float64 { return float64(read(anchors.Stats())) })
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "streamshift_anchor_members",
			Help: "Anchor members this instance keeps in upstream groups (an idle one holds no goroutine)."},
			func() float64 { return float64(anchors.Stats().Anchors) }),
		lane("heartbeat", func(s anchor.Stats) int { return s.HeartbeatsRunning }),
		lane("join", func(s anchor.Stats) int { return s.JoinsRunning }),
		expired,
	)
}

// newExpiredCounter counts the streams groups deleted after they stayed
// Empty for the check interval.
func newExpiredCounter() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: "streamshift_groups_expired_total",
		Help: "Streams groups deleted after staying Empty for coordinator.offsets-retention-check-interval (their anchors then leave)."})
}
