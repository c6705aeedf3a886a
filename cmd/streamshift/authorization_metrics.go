package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamshift/streamshift/route"
)

// registerAuthorizationMetrics registers the count of authorization probes
// the routes sent upstream (route/authorize.go), read when scraped: what
// the broker pays for the ACL checks of the requests streamshift serves.
func registerAuthorizationMetrics(reg prometheus.Registerer, routes *route.Routes) {
	if reg == nil {
		return
	}
	result := func(name string, read func(route.ProbeCounts) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "streamshift_authorization_probes_total", ConstLabels: prometheus.Labels{"result": name},
			Help: "Requests streamshift sent upstream on a client's connection to learn whether its principal may do what a request streamshift serves needs, by result: allowed, denied (a resource of the probe denied), failed (no answer)."},
			func() float64 { return float64(read(routes.AuthorizationProbes())) })
	}
	reg.MustRegister(
		result("allowed", func(c route.ProbeCounts) uint64 { return c.Allowed }),
		result("denied", func(c route.ProbeCounts) uint64 { return c.Denied }),
		result("failed", func(c route.ProbeCounts) uint64 { return c.Failed }),
	)
}
