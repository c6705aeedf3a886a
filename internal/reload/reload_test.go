package reload

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestFiles: the value is built once, rebuilt when a file changes, kept
// when the changed files do not build (and rebuilt once they do), and
// skips empty names.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "v")
	write := func(s string) {
		if err := os.WriteFile(name, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("one")
	builds := 0
	build := func() (string, error) {
		builds++
		b, err := os.ReadFile(name)
		if string(b) == "bad, longer" {
			return "", errors.New("bad")
		}
		return string(b), err
	}
	var heard []error
	f, err := New([]string{name, ""}, build, func(err error) { heard = append(heard, err) })
	if err != nil {
		t.Fatal(err)
	}
	f.every = 0 // check on every Get
	if v := f.Get(); v != "one" || builds != 1 {
		t.Fatalf("Get = %q after %d builds, want one after 1", v, builds)
	}
	write("bad, longer")
	if v := f.Get(); v != "one" || len(heard) != 1 || heard[0] == nil {
		t.Fatalf("after a bad change: %q, heard %v; want one kept and an error", v, heard)
	}
	write("three")
	if v := f.Get(); v != "three" || len(heard) != 2 || heard[1] != nil {
		t.Fatalf("after a good change: %q, heard %v; want three and a reload", v, heard)
	}
	n := builds
	if v := f.Get(); v != "three" || builds != n {
		t.Fatalf("unchanged files rebuilt (%d builds, was %d)", builds, n)
	}
	if _, err := New([]string{filepath.Join(dir, "missing")}, build, nil); err == nil {
		t.Fatal("a missing file was accepted")
	}
}
