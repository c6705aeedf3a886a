package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamshift/streamshift/status"
)

// runSelf runs this test binary as the streamshift command with args and
// returns its exit code, stdout and stderr.
func runSelf(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(append(os.Environ(), asStreamshift+"=1"), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// TestVersionCommand: `streamshift version` and `--version` print the
// build's version and commit and exit 0.
func TestVersionCommand(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		code, out, errOut := runSelf(t, nil, arg)
		if code != 0 || !strings.HasPrefix(out, "streamshift ") || !strings.Contains(out, "(commit ") {
			t.Fatalf("streamshift %s: exit %d, stdout %q, stderr %q", arg, code, out, errOut)
		}
	}
}

// TestBuildInfoMetric: streamshift_build_info is 1 with the version and
// commit labels.
func TestBuildInfoMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	registerBuildInfo(reg)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	version, commit := buildVersion()
	for _, mf := range mfs {
		if mf.GetName() != "streamshift_build_info" {
			continue
		}
		m := mf.GetMetric()[0]
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if m.GetGauge().GetValue() != 1 || labels["version"] != version || labels["commit"] != commit {
			t.Fatalf("streamshift_build_info %v = %v, want version %q commit %q = 1", labels, m.GetGauge().GetValue(), version, commit)
		}
		return
	}
	t.Fatal("no streamshift_build_info")
}

// TestBuildVersionLinkerFallback: a commit given with -X stands in where
// Go stamped none.
func TestBuildVersionLinkerFallback(t *testing.T) {
	defer func(c, v string) { buildCommit, buildVersionTag = c, v }(buildCommit, buildVersionTag)
	buildCommit, buildVersionTag = "abc123", "v9.9.9"
	if _, commit := buildVersion(); commit != "abc123" {
		t.Fatalf("commit %q, want the linker's abc123 (the test binary has no VCS stamp)", commit)
	}
}

// TestVersionFromBuildInfo: what `streamshift version` says for each way
// of building it: a pseudo-version from `go install …@commit` names the
// commit it carries; a tag names none; Go's VCS stamp names the commit.
func TestVersionFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		version    string
		settings   map[string]string
		wantCommit string
	}{
		{"v0.0.0-20261206211945-309e4b835831", nil, "309e4b835831"},
		{"v1.4.1-0.20261206211945-309e4b835831", nil, "309e4b835831"},
		{"v1.4.0-rc.1.0.20261206211945-309e4b835831", nil, "309e4b835831"},
		{"v0.0.0-20261206211945-309e4b835831+dirty", nil, "309e4b835831"},
		{"v1.4.0", nil, "unknown"},
		{"v0.0.0-test", nil, "unknown"},
		{"(devel)", map[string]string{"vcs.revision": "309e4b835831aaaa", "vcs.modified": "true"}, "309e4b835831aaaa-dirty"},
		{"v0.0.0-20261206211945-309e4b835831", map[string]string{"vcs.revision": "309e4b835831bbbb"}, "309e4b835831bbbb"},
	} {
		info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/streamshift/streamshift", Version: tc.version}}
		for k, v := range tc.settings {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: k, Value: v})
		}
		version, commit := fromBuildInfo(info)
		if version != tc.version || commit != tc.wantCommit {
			t.Errorf("%s %v: version %q commit %q, want %q %q", tc.version, tc.settings, version, commit, tc.version, tc.wantCommit)
		}
	}
}

// TestBuildVersionLinkerWins: the version and commit the Makefile or the
// Dockerfile stamp with -X (git describe, the commit) are the ones printed.
func TestBuildVersionLinkerWins(t *testing.T) {
	defer func(c, v string) { buildCommit, buildVersionTag = c, v }(buildCommit, buildVersionTag)
	buildCommit, buildVersionTag = "abc123", "v9.9.9-2-gabc123"
	if version, commit := buildVersion(); version != "v9.9.9-2-gabc123" || commit != "abc123" {
		t.Fatalf("version %q commit %q, want the linker's v9.9.9-2-gabc123 abc123", version, commit)
	}
}

// TestAdminRootRedirect: the admin URL's root leads to the status page;
// other paths are the admin handler's.
func TestAdminRootRedirect(t *testing.T) {
	h := adminWithStatus(http.NotFoundHandler(), func() *status.Server { return nil })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != "/ui" {
		t.Fatalf("GET /: %d Location %q, want 302 to /ui", rec.Code, rec.Header().Get("Location"))
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/nothing", nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("GET /nothing: %d, want the admin handler's 404", rec.Code)
	}
}
