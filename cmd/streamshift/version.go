package main

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// buildCommit and buildVersionTag, set with -ldflags "-X main.buildCommit=…",
// name the build as whoever packaged it saw it (the Makefile's build, image
// and dist, the Dockerfile's build arguments: `git describe` and the commit).
// They win over what Go stamped: Go sees no VCS in a git worktree (it stamps
// only a .git directory) nor in a tree copied without .git (the Docker
// build), and where it does, its version is a pseudo-version rather than the
// tag a release is named by.
var buildCommit, buildVersionTag string

// pseudoVersionRev matches a Go pseudo-version, vX.0.0-yyyymmddhhmmss-abcdef123456,
// vX.Y.Z-pre.0.yyyymmddhhmmss-… or vX.Y.Z-0.yyyymmddhhmmss-…, with or without
// a build suffix ("+dirty"): its last part is the commit's 12-hex-digit prefix.
var pseudoVersionRev = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+-(?:[0-9A-Za-z.-]*[.-])?[0-9]{14}-([0-9a-f]{12})(?:\+[0-9A-Za-z.-]+)?$`)

// buildVersion is what this binary was built from: the main module's
// version (a tag or a pseudo-version for `go install …@version`, "(devel)"
// for a build in a work tree) and the commit: the VCS commit Go stamped
// (vcs.revision, with "-dirty" when the tree had changes), else the commit
// prefix a pseudo-version carries; the linker's stamps win over both (see
// buildCommit). "unknown" is what nothing names (go run; a tagged version
// installed with go install names no commit).
func buildVersion() (version, commit string) {
	version, commit = "unknown", "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		version, commit = fromBuildInfo(info)
	}
	if buildVersionTag != "" {
		version = buildVersionTag
	}
	if buildCommit != "" {
		commit = buildCommit
	}
	return version, commit
}

// fromBuildInfo reads the version and commit out of Go's build information.
func fromBuildInfo(info *debug.BuildInfo) (version, commit string) {
	version, commit = "unknown", "unknown"
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
	if m := pseudoVersionRev.FindStringSubmatch(version); m != nil && commit == "unknown" {
		commit = m[1]
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
