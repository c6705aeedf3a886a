package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// probe answers path of the proxy's admin endpoints: its status and body.
func probe(t *testing.T, p *Proxy, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	p.AdminHandler(prometheus.NewRegistry()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

// TestProbesSayWhy: /healthz is liveness only (200 while the proxy starts
// and while no metadata came, 503 once its event loops stall), /readyz is
// 200 only once it serves, and a 503 of /readyz says why: the start-up
// step, the missing upstream metadata, the drain.
func TestProbesSayWhy(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	tp := startProxy(t, c.ListenAddrs(), nil)
	if code, body := probe(t, tp.Proxy, "/readyz"); code != 200 {
		t.Fatalf("/readyz of a serving proxy: %d %q", code, body)
	}
	if code, body := probe(t, tp.Proxy, "/healthz"); code != 200 {
		t.Fatalf("/healthz of a serving proxy: %d %q", code, body)
	}
	tp.stop()

	// Not started: nothing upstream answers, nothing listens yet.
	opts := tp.opts
	opts.Upstream = []string{"127.0.0.1:1"}
	opts.Metrics = nil
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := probe(t, p, "/healthz"); code != 200 {
		t.Fatalf("/healthz while starting: %d %q, want 200 (liveness only)", code, body)
	}
	p.Starting("waiting for the upstream brokers")
	if code, body := probe(t, p, "/readyz"); code != 503 || body != "starting: waiting for the upstream brokers" {
		t.Fatalf("/readyz while starting: %d %q, want 503 naming the step", code, body)
	}
	// Serving, but no broker has answered a metadata request.
	p.booted.Store(true)
	p.serving.Store(true)
	if code, body := probe(t, p, "/readyz"); code != 503 || !strings.HasPrefix(body, "upstream metadata not fetched yet") {
		t.Fatalf("/readyz without metadata: %d %q", code, body)
	}
	if code, body := probe(t, p, "/healthz"); code != 200 {
		t.Fatalf("/healthz with the brokers unreachable: %d %q, want 200", code, body)
	}
	p.draining.Store(true)
	if code, body := probe(t, p, "/readyz"); code != 503 || !strings.HasPrefix(body, "draining") {
		t.Fatalf("/readyz while draining: %d %q", code, body)
	}
	// Event loops whose ticker stopped (a deadlock) are not alive.
	p.clock.Store(time.Now().Add(-2 * stalledAfter).UnixNano())
	if code, body := probe(t, p, "/healthz"); code != 503 || !strings.HasPrefix(body, "event loops stalled") {
		t.Fatalf("/healthz with stalled loops: %d %q", code, body)
	}
}
