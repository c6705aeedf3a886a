package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/internal/testlog"
	"github.com/streamshift/streamshift/internal/testpki"
	"github.com/streamshift/streamshift/proxy"
)

// tokenFile writes token (with the newline an editor adds) to a new file.
func tokenFile(t *testing.T, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "admin-token")
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// adminCall is one request to the admin endpoints and the status it must get.
type adminCall struct {
	method, path, token string
	want                int
}

// do makes the call; it may run outside the test's goroutine (serve's
// ready callback), so a failure is an Errorf and a nil response.
func (c adminCall) do(t *testing.T, base string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(c.method, base+c.path, nil)
	if err != nil {
		t.Error(err)
		return nil
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", c.method, c.path, err)
		return nil
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != c.want {
		t.Errorf("%s %s (token %q): %d, want %d", c.method, c.path, c.token, resp.StatusCode, c.want)
	}
	return resp
}

// TestAdminGuard: with a token file, what changes something and the
// profiles need the token (401 with a challenge without it or with a wrong
// one); reads stay open; profiles are 404 unless admin.pprof, token or
// not; without a token file changes stay open as before.
func TestAdminGuard(t *testing.T) {
	inner := http.NewServeMux()
	for _, p := range []string{"/healthz", "/readyz", "/metrics", "/ui", "/api/groups", "/cluster", "/capture"} {
		inner.HandleFunc("GET "+p, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	}
	inner.HandleFunc("POST /capture/groups/{group}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	inner.HandleFunc("DELETE /capture/groups/{group}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	file := tokenFile(t, "s3cret")
	for _, tc := range []struct {
		name  string
		admin config.Admin
		calls []adminCall
	}{
		{"token", config.Admin{AuthTokenFile: file}, []adminCall{
			{"POST", "/capture/groups/g", "", 401},
			{"POST", "/capture/groups/g", "wrong", 401},
			{"POST", "/capture/groups/g", "s3cret", 204},
			{"DELETE", "/capture/groups/g", "", 401},
			{"DELETE", "/capture/groups/g", "s3cret", 204},
			{"PUT", "/healthz", "", 401},
			{"GET", "/healthz", "", 200},
			{"GET", "/readyz", "", 200},
			{"GET", "/metrics", "", 200},
			{"GET", "/ui", "", 200},
			{"GET", "/api/groups", "", 200},
			{"GET", "/cluster", "", 200},
			{"GET", "/capture", "", 200},
			{"GET", "/debug/pprof/", "s3cret", 404},
		}},
		{"pprof off by default", config.Admin{}, []adminCall{
			{"GET", "/debug/pprof/", "", 404},
			{"GET", "/debug/pprof/cmdline", "", 404},
			{"GET", "/debug/./pprof/cmdline", "", 404},
			{"POST", "/capture/groups/g", "", 204},
		}},
		{"pprof with token", config.Admin{Pprof: true, AuthTokenFile: file}, []adminCall{
			{"GET", "/debug/pprof/", "", 401},
			{"GET", "/debug/pprof/cmdline", "wrong", 401},
			{"GET", "/debug/pprof/", "s3cret", 200},
			{"GET", "/debug/pprof/cmdline", "s3cret", 200},
		}},
		{"pprof without token", config.Admin{Pprof: true}, []adminCall{
			{"GET", "/debug/pprof/", "", 200},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			g, err := newAdminGuard(inner, tc.admin, zerolog.New(&logs))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(g)
			defer srv.Close()
			for _, c := range tc.calls {
				resp := c.do(t, srv.URL)
				if resp != nil && c.want == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
					t.Errorf("%s %s: 401 without a Bearer challenge: %q", c.method, c.path, resp.Header.Get("WWW-Authenticate"))
				}
			}
			if tc.admin.AuthTokenFile != "" && !strings.Contains(logs.String(), `"message":"admin request refused"`) {
				t.Errorf("refusals not logged: %s", logs.String())
			}
		})
	}
}

// TestAdminTokenFileChanges: a rotated token file takes effect without a
// restart; one rewritten empty keeps the token read before, with an error
// logged.
func TestAdminTokenFileChanges(t *testing.T) {
	file := tokenFile(t, "first")
	logs := &testlog.Buffer{}
	g, err := newAdminGuard(http.NotFoundHandler(), config.Admin{AuthTokenFile: file}, zerolog.New(logs))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	rewrite := func(content string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		// A new modification time, whatever the file system's resolution.
		later := time.Now().Add(time.Duration(len(content)+1) * time.Hour)
		if err := os.Chtimes(file, later, later); err != nil {
			t.Fatal(err)
		}
	}
	rewrite("second\n")
	// The file is checked at most once a second, on use (internal/reload):
	// ask until the new token is taken, bounded by the test's deadline.
	for adminStatus(t, srv.URL, "second") == 401 {
		time.Sleep(50 * time.Millisecond)
	}
	if got := adminStatus(t, srv.URL, "first"); got != 401 {
		t.Errorf("the old token still works: %d", got)
	}
	rewrite("")
	for !strings.Contains(logs.String(), "the token read before stays in use") {
		if got := adminStatus(t, srv.URL, "second"); got == 401 {
			t.Fatalf("an empty token file locked the admin listener out")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := adminStatus(t, srv.URL, "second"); got == 401 {
		t.Errorf("an empty token file locked the admin listener out")
	}
}

func adminStatus(t *testing.T, base, token string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/capture/groups/g", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestAdminHandlerHasNoProfiles: the proxy's own admin handler does not
// serve /debug/pprof/, so the guard's admin.pprof is the one way to it.
func TestAdminHandlerHasNoProfiles(t *testing.T) {
	p, err := proxy.New(proxy.Options{Upstream: []string{"127.0.0.1:1"}, Listen: "127.0.0.1:" + strconv.Itoa(freePort(t, 33))})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	p.AdminHandler(prometheus.NewRegistry()).ServeHTTP(rec, httptest.NewRequest("GET", "/debug/pprof/", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("proxy admin handler serves /debug/pprof/: %d", rec.Code)
	}
}

// TestAdminLocked: `streamshift run` with --admin-auth-token-file: a
// capture started without the token is refused (401) and logged with the
// caller's address; with it, it starts (204) and stops, each logged at
// info with the remote address; probes stay open; profiles are 404.
func TestAdminLocked(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	port := freePort(t, 4)
	admin := "127.0.0.1:" + strconv.Itoa(port+3)
	args := []string{"--upstream", c.ListenAddrs()[0], "--listen", "127.0.0.1:" + strconv.Itoa(port), "--node-id-min", "0", "--node-id-max", "1",
		"--admin-listen", admin, "--admin-auth-token-file", tokenFile(t, "s3cret")}
	cfg, _, err := config.Load(args, []string{"STREAMSHIFT_COORDINATOR_DURABLE_LOG=false"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	checked := make(chan struct{})
	go func() {
		done <- serve(ctx, cfg, zerolog.New(logs), func(_ context.Context, addr string) {
			defer close(checked)
			base := "http://" + addr
			for _, call := range []adminCall{
				{"GET", "/healthz", "", 200},
				{"GET", "/readyz", "", 200},
				{"GET", "/metrics", "", 200},
				{"GET", "/capture", "", 200},
				{"GET", "/debug/pprof/", "s3cret", 404},
				{"POST", "/capture/groups/orders-app", "", 401},
				{"POST", "/capture/groups/orders-app", "wrong", 401},
				{"POST", "/capture/groups/orders-app", "s3cret", 204},
				{"DELETE", "/capture/groups/orders-app", "", 401},
				{"DELETE", "/capture/groups/orders-app", "s3cret", 204},
			} {
				call.do(t, base)
			}
		})
	}()
	select {
	case <-checked:
	case code := <-done:
		t.Fatalf("serve exited with %d:\n%s", code, logs)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
	lines := strings.Split(logs.String(), "\n")
	for _, want := range []struct{ level, msg string }{
		{"warn", "admin request refused"},
		{"info", "capture started (admin request)"},
		{"info", "capture stopped (admin request)"},
	} {
		found := false
		for _, l := range lines {
			if strings.Contains(l, `"message":"`+want.msg+`"`) && strings.Contains(l, `"level":"`+want.level+`"`) &&
				strings.Contains(l, `"remote_addr":"127.0.0.1:`) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s line %q with the remote address in:\n%s", want.level, want.msg, logs)
		}
	}
}

// TestAdminTLS: with admin.tls the admin listener speaks TLS with the
// listeners' certificate, and a client that trusts its CA reads /healthz
// without presenting a certificate of its own.
func TestAdminTLS(t *testing.T) {
	ca, err := testpki.NewCA("admin-test")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.IssueNow("streamshift", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := pair.Write(t.TempDir(), "listener")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tln, err := adminTLS(ln, config.TLS{CertFile: certFile, KeyFile: keyFile}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })}
	go func() { _ = srv.Serve(tln) }()
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}}}
	resp, err := client.Get("https://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("https /healthz: %d", resp.StatusCode)
	}
	if resp, err := http.Get("http://" + ln.Addr().String() + "/healthz"); err == nil && resp.StatusCode == 200 {
		t.Errorf("plain HTTP answered 200 on a TLS admin listener")
	}
}

// TestAdminRefusalsLogBounded: a client sending requests without the token
// gets 401 every time, but the log gets one line, not one per request (a
// hammering client must not flood it).
func TestAdminRefusalsLogBounded(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	g, err := newAdminGuard(http.NotFoundHandler(), config.Admin{AuthTokenFile: file}, zerolog.New(&logs))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	for range 100 {
		resp, err := http.Post(srv.URL+"/capture/groups/g", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", resp.StatusCode)
		}
	}
	if n := strings.Count(logs.String(), `"message":"admin request refused"`); n != 1 {
		t.Fatalf("100 refusals within 10 s logged %d lines, want 1", n)
	}
}
