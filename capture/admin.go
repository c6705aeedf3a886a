package capture

import (
	"encoding/json"
	"net/http"
)

// Handler serves the capture's admin API:
//
//	GET    /capture                                 status: file, filters, flight recorders
//	POST   /capture/groups/{group}                  start capturing a group
//	DELETE /capture/groups/{group}                  stop
//	GET    /capture/groups/{group}/flight-recorder  the group's flight recorder (JSON lines)
func (r *Recorder) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /capture", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(r.Status())
	})
	// A capture copies a group's traffic to memory and disk: who started
	// and stopped one is in the log.
	mux.HandleFunc("POST /capture/groups/{group}", func(w http.ResponseWriter, req *http.Request) {
		group := req.PathValue("group")
		if err := r.StartGroup(group); err != nil {
			r.o.Log.Warn().Err(err).Str("group", group).Str("remote_addr", req.RemoteAddr).Msg("capture not started (admin request)")
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.o.Log.Info().Str("group", group).Str("remote_addr", req.RemoteAddr).Msg("capture started (admin request)")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE /capture/groups/{group}", func(w http.ResponseWriter, req *http.Request) {
		group := req.PathValue("group")
		r.StopGroup(group)
		r.o.Log.Info().Str("group", group).Str("remote_addr", req.RemoteAddr).Msg("capture stopped (admin request)")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /capture/groups/{group}/flight-recorder", func(w http.ResponseWriter, req *http.Request) {
		b, ok := r.FlightRecorder(req.PathValue("group"))
		if !ok {
			http.Error(w, "no flight recorder for the group", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = w.Write(b)
	})
	return mux
}
