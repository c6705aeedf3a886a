package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/streamshift/streamshift/config"
)

// TestConfigErrorOutput: an unknown flag is one line with a suggestion,
// then the short usage; configuration problems are one line each, every
// line with the command's name, without the usage.
func TestConfigErrorOutput(t *testing.T) {
	usage := func(w io.Writer) { config.PrintUsage(w, "run") }
	var out bytes.Buffer
	_, _, err := config.Load([]string{"--listn", "127.0.0.1:9092"}, nil, io.Discard)
	printConfigError(&out, "run", err, usage)
	lines := strings.Split(out.String(), "\n")
	if lines[0] != "streamshift run: unknown flag --listn (did you mean --listen?)" || lines[1] != "" || lines[2] != "usage: streamshift run [flags]" {
		t.Errorf("unknown flag output:\n%s", out.String())
	}
	if n := len(lines); n > 45 {
		t.Errorf("unknown flag output is %d lines", n)
	}

	out.Reset()
	_, _, err = config.Load([]string{"--upstream", "a:1", "--request-timeout", "30"}, []string{"STREAMSHIFT_LOG_LEVEL=loud"}, io.Discard)
	printConfigError(&out, "run", err, usage)
	want := `streamshift run: limits.request-timeout "30": a duration needs a unit, e.g. 30s or 500ms (from --request-timeout)
streamshift run: log.level "loud": want trace, debug, info, warn or error (from environment STREAMSHIFT_LOG_LEVEL)
`
	if out.String() != want {
		t.Errorf("problems output:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestConfigReferenceCommand: `streamshift config reference` is --help-all;
// --markdown gives tables.
func TestConfigReferenceCommand(t *testing.T) {
	var out, errOut, helpAll bytes.Buffer
	if code := configCmd([]string{"reference"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	_, _, _ = config.Load([]string{"--help-all"}, nil, &helpAll)
	if out.String() != helpAll.String() {
		t.Errorf("config reference differs from run --help-all")
	}
	out.Reset()
	if code := configCmd([]string{"reference", "--markdown"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "| `admin.auth-token-file` |") {
		t.Errorf("markdown: exit %d\n%s", code, out.String())
	}
	if code := configCmd([]string{"referense"}, &out, &errOut); code != 2 {
		t.Errorf("unknown subcommand: exit %d", code)
	}
}
