package main

import (
	"archive/zip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const modulePath = "github.com/streamshift/streamshift"

// TestGoInstallVersion: `go install github.com/streamshift/streamshift/cmd/streamshift@VERSION`
// works from a module proxy and the installed `streamshift version` names
// that version and its commit. The checkout (what git keeps, uncommitted
// changes included) is served as the module at the pseudo-version of HEAD
// by a file GOPROXY the test writes (list, .info, .mod and .zip, as the Go
// module proxy serves them); its dependencies come from the local module
// cache, else the configured proxy. GOBIN and GOMODCACHE are temporary.
func TestGoInstallVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("go install builds the command from a module proxy: not under -short")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", root, "show", "-s", "--format=%H %ct", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout (the pseudo-version is HEAD's): %v", err)
	}
	rev, ct, _ := strings.Cut(strings.TrimSpace(string(head)), " ")
	secs, err := strconv.ParseInt(ct, 10, 64)
	if err != nil || len(rev) < 12 {
		t.Fatalf("git show HEAD: %q", head)
	}
	commitTime := time.Unix(secs, 0).UTC()
	version := "v0.0.0-" + commitTime.Format("20060102150405") + "-" + rev[:12]

	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	writeModuleProxy(t, root, proxy, version, commitTime)

	goEnv := func(key string) string {
		out, err := exec.Command("go", "env", key).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", key, err)
		}
		return strings.TrimSpace(string(out))
	}
	// The local module cache's download directory is a module proxy of
	// its own: the dependencies need no network when the cache has them.
	goproxy := "file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(goEnv("GOMODCACHE"), "cache", "download"))
	if p := goEnv("GOPROXY"); p != "" && p != "off" {
		goproxy += "," + p
	}
	gobin := filepath.Join(tmp, "bin")
	work := filepath.Join(tmp, "work") // outside any module: go install …@version ignores go.mod anyway
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	install := exec.Command("go", "install", modulePath+"/cmd/streamshift@"+version)
	install.Dir = work
	install.Env = append(os.Environ(),
		"GOPROXY="+goproxy,
		"GONOSUMDB="+modulePath, // the test's module is in no checksum database
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOBIN="+gobin,
		"GOWORK=off",
		"GOTOOLCHAIN=local",
		"CGO_ENABLED=0", // as make dist builds: the two share compiled dependencies
		// -modcacherw: a temporary module cache that t.TempDir can remove;
		// -trimpath: compiled dependencies are shared with the build cache
		// of earlier runs whatever the module cache's directory.
		"GOFLAGS=-modcacherw -trimpath",
	)
	start := time.Now()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install %s/cmd/streamshift@%s: %v\n%s", modulePath, version, err, out)
	}
	t.Logf("go install …@%s: %s", version, time.Since(start).Round(time.Second))

	out, err := exec.Command(filepath.Join(gobin, "streamshift"), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("streamshift version: %v\n%s", err, out)
	}
	want := "streamshift " + version + " (commit " + rev[:12] + ","
	if !strings.HasPrefix(string(out), want) {
		t.Fatalf("streamshift version:\n%s\nwant it to start %q", out, want)
	}
	t.Logf("installed: %s", strings.TrimSpace(string(out)))
}

// writeModuleProxy lays out dir as a GOPROXY serving the module in root at
// version: @v/list, .info, .mod and the .zip whose entries are
// module@version/path. The zip holds what git keeps of the tree (tracked
// and untracked files, not ignored ones), like a module zip made from a
// tag, less vendor/ and any nested module.
func writeModuleProxy(t *testing.T, root, dir, version string, at time.Time) {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files, nested []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" || strings.HasPrefix(f, "vendor/") {
			continue
		}
		if strings.HasSuffix(f, "/go.mod") {
			nested = append(nested, strings.TrimSuffix(f, "go.mod"))
		}
		files = append(files, f)
	}
	vdir := filepath.Join(dir, filepath.FromSlash(modulePath), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(vdir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	n := 0
files:
	for _, f := range files {
		for _, prefix := range nested {
			if strings.HasPrefix(f, prefix) {
				continue files
			}
		}
		path := filepath.Join(root, filepath.FromSlash(f))
		if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, a symlink or a submodule: not in a module zip
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(modulePath + "@" + version + "/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, at})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  gomod,
	} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("module proxy: %s@%s, %d files", modulePath, version, n)
}
