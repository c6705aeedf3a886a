package main

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamshift/streamshift/route"
)

// TestAuthorizationProbesMetric: streamshift_authorization_probes_total
// has a series per result from the start, so a dashboard's rate of probes
// per heartbeat has its denominator's companion before the first probe.
func TestAuthorizationProbesMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	registerAuthorizationMetrics(reg, &route.Routes{})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "streamshift_authorization_probes_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" {
					results[l.GetValue()] = true
				}
			}
		}
	}
	for _, r := range []string{"allowed", "denied", "failed"} {
		if !results[r] {
			t.Errorf("no streamshift_authorization_probes_total{result=%q}", r)
		}
	}
}
