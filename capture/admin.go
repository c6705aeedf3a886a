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
	mux.HandleFunc("POST /capture/groups/{group}", func(w http.ResponseWriter, req *http.Request) {
		if err := r.StartGroup(req.PathValue("group")); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE /capture/groups/{group}", func(w http.ResponseWriter, req *http.Request) {
		r.StopGroup(req.PathValue("group"))
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
