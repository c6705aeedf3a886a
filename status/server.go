package status

import (
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"time"

	_ "embed"
)

// Options configure the status server.
type Options struct {
	Coordinator Coordinator
	Events      *Events
	// FlightRecorders lists the groups that have a flight recorder (the
	// capture's), for the page's links; nil: none.
	FlightRecorders func() []string
	// Cluster is the instances sharing the durable group log, for the
	// page's instances and partition owners and each group's owner; nil
	// without the durable log.
	Cluster Cluster
	// EndOffsets reads changelog end offsets from the upstream, for the
	// lag of members that do not report them (classic members); nil: only
	// reported ends are known.
	EndOffsets EndOffsets
	// Upstream reads classic groups and committed offsets from the
	// upstream, for the observed classic groups and measured lags; nil:
	// neither.
	Upstream Upstream
}

// Server serves the status page and its JSON.
type Server struct {
	coord   Coordinator
	events  *Events
	flights func() []string
	cluster Cluster
	// endOffsets: Options.EndOffsets.
	endOffsets EndOffsets
	upstream   Upstream
	// streamsGroups: the observed groups seen as Kafka Streams groups.
	streamsGroups kafkaStreamsGroups
	// reads are the shared reads of every group and of each group
	// (shared_read.go).
	reads   sharedReads
	handler http.Handler
}

// New returns the status server.
func New(o Options) *Server {
	if o.Events == nil {
		o.Events = NewEvents(nil)
	}
	s := &Server{coord: o.Coordinator, events: o.Events, flights: o.FlightRecorders, cluster: o.Cluster, endOffsets: o.EndOffsets, upstream: o.Upstream,
		reads: sharedReads{byID: map[string]*sharedRead{}, share: readShareWindow}}
	s.handler = s.routes()
	return s
}

// readTimeout bounds one page's or API call's coordinator reads.
const readTimeout = 5 * time.Second

// Handler serves:
//
//	GET /ui               the status page (HTML; refreshes itself with JS);
//	                      ?group=ID also says which instance owns group ID
//	GET /api/groups       the groups as JSON
//	GET /api/groups/{id}  one group as JSON (404 when neither served nor migrated)
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ui", s.page)
	mux.HandleFunc("GET /api/groups", func(w http.ResponseWriter, req *http.Request) {
		gs, err := s.read(req.Context(), "")
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		writeJSON(w, map[string]any{"groups": gs})
	})
	mux.HandleFunc("GET /api/groups/{id}", func(w http.ResponseWriter, req *http.Request) {
		gs, err := s.read(req.Context(), req.PathValue("id"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		if len(gs) == 0 {
			http.Error(w, "group "+req.PathValue("id")+" is not served here", http.StatusNotFound)
			return
		}
		writeJSON(w, gs[0])
	})
	return mux
}

// read is group id ("": every group), as JSON wants it (never null).
func (s *Server) read(ctx context.Context, id string) ([]Group, error) {
	gs, err := s.readShared(ctx, id)
	if gs == nil {
		gs = []Group{}
	}
	return gs, err
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

//go:embed page.html
var pageHTML string

var pageTmpl = template.Must(template.New("ui").Funcs(template.FuncMap{
	"join": func(ts []string) string {
		if len(ts) == 0 {
			return "–"
		}
		out := ""
		for i, t := range ts {
			if i > 0 {
				out += " "
			}
			out += t
		}
		return out
	},
}).Parse(pageHTML))

// maxLookupGroup bounds the ?group= of the page (Kafka's group ids are
// strings of at most 32767 bytes; a longer one is no group).
const maxLookupGroup = 32767

func (s *Server) page(w http.ResponseWriter, req *http.Request) {
	gs, err := s.read(req.Context(), "")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	view := struct {
		Groups  []Group
		Err     string
		At      string
		Cluster *ClusterView
		// Lookup is the ?group= asked for, Found where it is served.
		Lookup string
		Found  *GroupOwner
	}{Groups: gs, At: time.Now().UTC().Format("2006-01-02 15:04:05 UTC")}
	if err != nil {
		view.Err = err.Error()
	}
	if s.cluster != nil {
		cv := s.cluster.View()
		view.Cluster = &cv
		if q := req.URL.Query().Get("group"); q != "" && len(q) <= maxLookupGroup {
			view.Lookup, view.Found = q, cv.groupOwner(s.cluster, q)
		}
	}
	_ = pageTmpl.Execute(w, view)
}
