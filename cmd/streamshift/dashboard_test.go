package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/cluster"
	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/status"
)

// describedNames is a Registerer that keeps the name of every metric
// registered through it, labels or not, observed or not (a vector with no
// child yet is on no /metrics page, but it is described).
type describedNames map[string]bool

func (d describedNames) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for desc := range ch {
		if m := fqName.FindStringSubmatch(desc.String()); m != nil {
			d[m[1]] = true
		}
	}
	return nil
}

func (d describedNames) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = d.Register(c)
	}
}

func (d describedNames) Unregister(prometheus.Collector) bool { return true }

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// servedMetrics are the metrics serve registers: the capture's, the groups',
// the cluster's and the proxy's, made by the constructors serve calls.
func servedMetrics(t *testing.T) describedNames {
	t.Helper()
	names := describedNames{}
	cfg := config.Default()
	cfg.Upstream = []string{"127.0.0.1:9092"}
	log := zerolog.Nop()
	rec, err := newRecorder(&cfg, log, names)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	status.NewMetrics(names)
	names.MustRegister(cluster.MetricCollectors()...)
	if _, err := proxy.New(proxyOptions(&cfg, log, names)); err != nil {
		t.Fatal(err)
	}
	return names
}

// TestGrafanaDashboard: every metric the dashboard queries is one streamshift
// exports (a histogram by its _bucket, _sum or _count series), so a renamed
// metric fails here and not as an empty panel.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/grafana/streamshift.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	names := servedMetrics(t)
	used := regexp.MustCompile(`streamshift_[a-z_]+`)
	n := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range used.FindAllString(tg.Expr, -1) {
				n++
				base := m
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(m, suffix); ok && names[b] {
						base = b
					}
				}
				if !names[base] {
					t.Errorf("panel %q queries %s, which streamshift does not export", p.Title, m)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("the dashboard queries no streamshift metric")
	}
}
