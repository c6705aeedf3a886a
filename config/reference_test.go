package config

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md's tables from the code")

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

// referencePath is the configuration reference the README links to: its
// tables are generated, so it lives apart from the README's prose.
const referencePath = "../docs/configuration.md"

// TestREADMEConfigTables: the configuration reference's tables
// (docs/configuration.md) are what the code says (keys, flags, environment
// variables, defaults, meanings), and the streams.* rows name every streams
// key. -update rewrites them, and appends a section the file has no block
// for yet (a new keyDoc section) at its end, for a heading to be put on it.
func TestREADMEConfigTables(t *testing.T) {
	raw, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, section := range referenceSections() {
		begin, end := "<!-- config:"+section+" -->\n", "<!-- /config:"+section+" -->"
		i, j := strings.Index(doc, begin), strings.Index(doc, end)
		if i < 0 || j < i {
			if *update {
				doc = strings.TrimRight(doc, "\n") + "\n\n## " + section + "\n\n" + begin + Reference(section) + end + "\n"
				continue
			}
			t.Errorf("docs/configuration.md has no %q … %q block; run go test ./config -run TestREADME -update", strings.TrimSpace(begin), end)
			continue
		}
		got, want := doc[i+len(begin):j], Reference(section)
		if got == want {
			continue
		}
		if *update {
			doc = doc[:i+len(begin)] + want + doc[j:]
			continue
		}
		t.Errorf("docs/configuration.md's %s table differs from the code; run go test ./config -run TestREADME -update\n--- docs/configuration.md\n%s--- code\n%s", section, got, want)
	}
	if *update {
		if err := os.WriteFile(referencePath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	row := ""
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| `streams.") {
			row += line
		}
	}
	for _, k := range knownKeys() {
		if name, ok := strings.CutPrefix(k, streamsKeyPrefix); ok && !strings.Contains(row, name) {
			t.Errorf("docs/configuration.md's streams.* rows do not name %s", name)
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
