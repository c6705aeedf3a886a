package proxy

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// AdminHandler serves /healthz (the loops run), /readyz (listening, upstream
// metadata known, not draining) and /metrics (Prometheus, from gatherer).
// Go's profiles are cmd/streamshift's, behind admin.pprof and the token.
func (p *Proxy) AdminHandler(gatherer prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !p.Live() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		switch {
		case p.draining.Load():
			http.Error(w, "draining", http.StatusServiceUnavailable)
		case !p.booted.Load():
			http.Error(w, "starting", http.StatusServiceUnavailable)
		case !p.metaOK.Load():
			http.Error(w, "upstream metadata not fetched yet", http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte("ok\n"))
		}
	})
	mux.Handle("/metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	return mux
}
