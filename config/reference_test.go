package config

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite README.md's configuration tables from the code")

// TestEveryKeyDocumented: a key added to Config without its keyDoc fails
// here, and so does a keyDoc of a key that no longer exists.
func TestEveryKeyDocumented(t *testing.T) {
	if missing := undocumentedKeys(); len(missing) > 0 {
		t.Errorf("keys without a keyDoc (config/reference_docs.go): %v", missing)
	}
	known := map[string]bool{}
	for _, k := range knownKeys() {
		known[k] = true
	}
	seen := map[string]bool{}
	for _, d := range keyDocs {
		if !known[d.key] || seen[d.key] {
			t.Errorf("keyDoc of %q: no configuration key, or documented twice", d.key)
		}
		seen[d.key] = true
	}
}

// TestREADMEConfigTables: the README's configuration tables are what the
// code says (keys, flags, environment variables, defaults, meanings), and
// the streams.* rows name every streams key. -update rewrites them.
func TestREADMEConfigTables(t *testing.T) {
	const path = "../README.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	for _, section := range referenceSections() {
		begin, end := "<!-- config:"+section+" -->\n", "<!-- /config:"+section+" -->"
		i, j := strings.Index(readme, begin), strings.Index(readme, end)
		if i < 0 || j < i {
			t.Errorf("README.md has no %q … %q block", strings.TrimSpace(begin), end)
			continue
		}
		got, want := readme[i+len(begin):j], Reference(section)
		if got == want {
			continue
		}
		if *update {
			readme = readme[:i+len(begin)] + want + readme[j:]
			continue
		}
		t.Errorf("README.md's %s configuration table differs from the code; run go test ./config -run TestREADME -update\n--- README\n%s--- code\n%s", section, got, want)
	}
	if *update {
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	row := ""
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "| `streams.") {
			row += line
		}
	}
	for _, k := range knownKeys() {
		if name, ok := strings.CutPrefix(k, streamsKeyPrefix); ok && !strings.Contains(row, name) {
			t.Errorf("README.md's streams.* rows do not name %s", name)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for in, want := range map[string]string{"1m0s": "1m", "30m0s": "30m", "1h0m0s": "1h", "10s": "10s", "1m30s": "1m30s", "0s": "0s", "2h30m0s": "2h30m", "100ms": "100ms", "x": "x"} {
		if got := shortDuration(in); got != want {
			t.Errorf("shortDuration(%q) = %q, want %q", in, got, want)
		}
	}
}
