package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// buildCommit and buildVersionTag, set with -ldflags "-X main.buildCommit=…",
// stand in where Go stamped no VCS information: a build from a git worktree
// (Go stamps only a .git directory), or one whose tree is copied without
// .git (the Docker build; the Makefile passes both).
var buildCommit, buildVersionTag string

// buildVersion is what this binary was built from: the main module's
// version (a tag, a pseudo-version, or "(devel)" for a build in a work
// tree) and the VCS commit Go stamped into it (vcs.revision, with
// "-dirty" when the tree had changes), "unknown" when not stamped (go run,
// a build outside a checkout).
func buildVersion() (version, commit string) {
	version, commit = "unknown", "unknown"
	defer func() {
		if commit == "unknown" && buildCommit != "" {
			commit = buildCommit
		}
		if (version == "unknown" || version == "(devel)") && buildVersionTag != "" {
			version = buildVersionTag
		}
	}()
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version, commit
	}
	if info.Main.Version != "" {
		version = info.Main.Version
	}
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && commit != "unknown" {
		commit += "-dirty"
	}
	return version, commit
}

// printVersion is `streamshift version` and `streamshift --version`.
func printVersion(w io.Writer) {
	version, commit := buildVersion()
	fmt.Fprintf(w, "streamshift %s (commit %s, %s, %s/%s)\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// registerBuildInfo adds streamshift_build_info{version,commit} 1 to reg:
// which build an instance runs, as a dashboard or an alert sees it.
func registerBuildInfo(reg prometheus.Registerer) {
	version, commit := buildVersion()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "streamshift_build_info",
		Help:        "Always 1; its labels name the streamshift build: module version and VCS commit.",
		ConstLabels: prometheus.Labels{"version": version, "commit": commit},
	})
	g.Set(1)
	reg.MustRegister(g)
}
