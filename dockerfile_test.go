package streamshift_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDockerfileBuilder: the Dockerfile's default BUILDER is the official Go
// image of go.mod's Go version (a go.mod that moves to a newer Go moves the
// image too), and the image it makes runs as uid 65532 on an empty base with
// the admin listener on every interface of the container.
func TestDockerfileBuilder(t *testing.T) {
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go ([0-9.]+)$`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	dockerfile, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	d := string(dockerfile)
	for _, want := range []string{
		"\nARG BUILDER=golang:" + string(m[1]) + "\n",
		"\nFROM ${BUILDER} AS build\n",
		"\nFROM scratch\n",
		"\nUSER 65532:65532\n",
		"STREAMSHIFT_ADMIN_LISTEN=0.0.0.0:19080",
		"STREAMSHIFT_ADMIN_AUTH_TOKEN_FILE",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("Dockerfile has no %q", strings.TrimSpace(want))
		}
	}
}
