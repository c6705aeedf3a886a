package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDist: `make dist` (linux/amd64 alone here; `make test` builds every
// platform) makes a release archive whose binary is static and prints the
// version it was stamped with (git describe) and the commit, with README.md
// beside it, and a SHA256SUMS that `sha256sum -c` verifies. (It is in this
// package, beside TestGoInstallVersion, so that the two run one after the
// other and the second finds the dependencies the first compiled.)
func TestDist(t *testing.T) {
	if testing.Short() {
		t.Skip("make dist builds the command: not under -short")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("runs the linux/amd64 archive's binary: this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	describe, err := exec.Command("git", "-C", root, "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		t.Skipf("not a git checkout (make dist stamps git describe): %v", err)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	version, commit := strings.TrimSpace(string(describe)), strings.TrimSpace(string(head))

	dir := t.TempDir()
	mk := exec.Command("make", "dist", "DIST_DIR="+dir, "DIST_PLATFORMS=linux/amd64")
	mk.Dir = root
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make dist: %v\n%s", err, out)
	}

	name := "streamshift-" + version + "-linux-amd64"
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	archive, err := os.ReadFile(filepath.Join(dir, name+".tar.gz"))
	if err != nil {
		t.Fatalf("no %s.tar.gz: %v", name, err)
	}
	sum := sha256.Sum256(archive)
	if want := hex.EncodeToString(sum[:]) + "  " + name + ".tar.gz\n"; string(sums) != want {
		t.Fatalf("SHA256SUMS:\n%s\nwant:\n%s", sums, want)
	}
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = dir
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c SHA256SUMS: %v\n%s", err, out)
	}

	files := untar(t, archive, filepath.Join(dir, "x"))
	for _, f := range []string{name + "/streamshift", name + "/README.md"} {
		if _, ok := files[f]; !ok {
			t.Fatalf("%s.tar.gz holds %v, want %s", name, files, f)
		}
	}
	bin := filepath.Join(dir, "x", name, "streamshift")
	if files[name+"/streamshift"]&0o111 == 0 {
		t.Fatalf("streamshift in the archive is not executable: %v", files[name+"/streamshift"])
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the archive's binary is dynamically linked (it has an interpreter): want CGO_ENABLED=0, static")
		}
	}
	ef.Close()

	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", name, err, out)
	}
	if want := "streamshift " + version + " (commit " + commit + ","; !strings.HasPrefix(string(out), want) {
		t.Fatalf("%s version:\n%s\nwant it to start %q", name, out, want)
	}
	t.Logf("%s: %s", name, strings.TrimSpace(string(out)))
}

// untar extracts a .tar.gz into dir and returns its regular files' names
// and modes.
func untar(t *testing.T, archive []byte, dir string) map[string]os.FileMode {
	t.Helper()
	zr, err := gzip.NewReader(bufio.NewReader(strings.NewReader(string(archive))))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]os.FileMode{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		files[h.Name] = h.FileInfo().Mode()
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, h.FileInfo().Mode())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, tr); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
