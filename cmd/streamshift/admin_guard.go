package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/http/pprof"
	"path"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/internal/loglimit"
	"github.com/streamshift/streamshift/internal/reload"
)

// adminGuard stands in front of every admin endpoint. Reads stay open
// (probes, Prometheus, the status pages); what changes state (any method
// but GET and HEAD: starting and stopping captures) and Go's profiles
// (they show the command line and memory) need the bearer token of
// admin.auth-token-file when one is set. The profiles exist only with
// admin.pprof.
type adminGuard struct {
	next  http.Handler
	pprof http.Handler          // nil: admin.pprof off, /debug/pprof/ is 404
	token *reload.Files[string] // nil: no admin.auth-token-file
	log   zerolog.Logger

	// A refused request is logged, but a client hammering the admin port
	// must not flood the log: the first refusal, then at most one line per
	// refusalLogEvery, counting those left out.
	refusals loglimit.Limiter
}

// refusalLogEvery spaces the admin refusals' log lines.
const refusalLogEvery = 10 * time.Second

// newAdminGuard wraps next as the admin section says. The token file is
// read now (Validate checked it) and again when it changes, so a rotated
// Secret takes effect without a restart; a rewrite that leaves it empty
// keeps the old token, with an error logged.
func newAdminGuard(next http.Handler, a config.Admin, log zerolog.Logger) (http.Handler, error) {
	g := &adminGuard{next: next, log: log}
	g.refusals.Every = refusalLogEvery
	if a.Pprof {
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		g.pprof = mux
	}
	if a.AuthTokenFile != "" {
		file := a.AuthTokenFile
		tok, err := reload.New([]string{file}, func() (string, error) { return config.ReadAdminToken(file) }, func(err error) {
			if err != nil {
				log.Error().Err(err).Str("file", file).Msg("admin.auth-token-file; the token read before stays in use")
				return
			}
			log.Info().Str("file", file).Msg("admin.auth-token-file changed; its new token is in use")
		})
		if err != nil {
			return nil, err
		}
		g.token = tok
	}
	return g, nil
}

func (g *adminGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The path as the mux routes it (/debug/./pprof/ is /debug/pprof/).
	p := path.Clean("/" + r.URL.Path)
	profile := p == "/debug/pprof" || strings.HasPrefix(p, "/debug/pprof/")
	if profile && g.pprof == nil {
		http.Error(w, "404 page not found (profiles are off: admin.pprof)", http.StatusNotFound)
		return
	}
	readOnly := r.Method == http.MethodGet || r.Method == http.MethodHead
	if g.token != nil && (profile || !readOnly) {
		if reason := g.refuse(r); reason != "" {
			g.logRefusal(r, reason)
			challenge := `Bearer realm="streamshift admin"`
			if reason == "wrong token" {
				challenge += `, error="invalid_token"`
			}
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "401 unauthorized: this request needs Authorization: Bearer <the token of admin.auth-token-file>", http.StatusUnauthorized)
			return
		}
	}
	if profile {
		g.pprof.ServeHTTP(w, r)
		return
	}
	g.next.ServeHTTP(w, r)
}

// refuse says why r does not carry the token, "" when it does. Both sides
// are hashed first, so the comparison takes the same time whatever the
// length or the first differing byte.
func (g *adminGuard) refuse(r *http.Request) string {
	scheme, given, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "no bearer token"
	}
	want := sha256.Sum256([]byte(g.token.Get()))
	got := sha256.Sum256([]byte(strings.TrimSpace(given)))
	if subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
		return "wrong token"
	}
	return ""
}

// adminOpen reports whether addr binds beyond this host (a wildcard or a
// non-loopback address), where an admin listener without a token lets
// anyone who reaches it start captures.
func adminOpen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return true
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// logRefusal logs a refused admin request, spaced by refusalLogEvery.
func (g *adminGuard) logRefusal(r *http.Request, reason string) {
	ok, unsaid := g.refusals.Allow(time.Now().UnixNano())
	if !ok {
		return
	}
	g.log.Warn().Str("remote_addr", r.RemoteAddr).Str("method", r.Method).Str("path", r.URL.Path).Str("reason", reason).
		Int64("refused_since_last_line", unsaid).Msg("admin request refused")
}
