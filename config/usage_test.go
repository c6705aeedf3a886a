package config

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"regexp"
	"strings"
	"testing"
)

// TestRunHelpFitsAScreen: `streamshift run -h` is one screen: the keys
// everyone sets, each with its variable, then where the rest is.
func TestRunHelpFitsAScreen(t *testing.T) {
	var out bytes.Buffer
	if _, _, err := Load([]string{"-h"}, nil, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	help := out.String()
	if n := strings.Count(help, "\n"); n > 40 {
		t.Errorf("-h is %d lines, more than a screen (40):\n%s", n, help)
	}
	types := keyTypes()
	for _, c := range commonKeys {
		if _, ok := types[c.key]; ok && !strings.Contains(help, envName(c.key)) {
			t.Errorf("-h lacks %s", c.key)
		}
	}
	for _, want := range []string{"usage: streamshift run [flags]", "--config FILE", "--admin-auth-token-file FILE",
		"streamshift run --help-all", "streamshift config reference", "(STREAMSHIFT_NODE_PORT_BASE; default listen port + 1)"} {
		if !strings.Contains(help, want) {
			t.Errorf("-h lacks %q:\n%s", want, help)
		}
	}
}

// TestHelpAllListsEveryKeyOnce: --help-all has one entry per key (streams.*
// included) naming its flag when it has one, its variable and its default.
func TestHelpAllListsEveryKeyOnce(t *testing.T) {
	var out bytes.Buffer
	if _, _, err := Load([]string{"--help-all"}, nil, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help-all: %v", err)
	}
	entries := map[string]int{}
	entry := regexp.MustCompile(`^  (\S+)  \((.*)\)$`)
	for _, line := range strings.Split(out.String(), "\n") {
		if m := entry.FindStringSubmatch(line); m != nil {
			entries[m[1]]++
			key := m[1]
			if !strings.Contains(m[2], envName(key)) || !strings.Contains(m[2], "default ") && !strings.Contains(m[2], "required") {
				t.Errorf("entry of %s lacks its variable or default: %q", key, line)
			}
			if f := flagOf(key); f != "" && !strings.Contains(m[2], "--"+f+",") {
				t.Errorf("entry of %s lacks its flag --%s: %q", key, f, line)
			}
		}
	}
	for _, key := range knownKeys() {
		if entries[key] != 1 {
			t.Errorf("--help-all lists %s %d times, want once", key, entries[key])
		}
		delete(entries, key)
	}
	for key := range entries {
		t.Errorf("--help-all lists %s, not a key", key)
	}
	var md bytes.Buffer
	MarkdownReference(&md)
	for _, key := range knownKeys() {
		if n := strings.Count(md.String(), "| `"+key+"` |"); n != 1 {
			t.Errorf("markdown reference has %d rows of %s, want 1", n, key)
		}
	}
}

// TestUnknownFlag: a flag that does not exist is one line, with the flag it
// most likely meant; a key written as a flag says how to set it; a command
// line that does not parse is a *UsageError (the command prints its short
// usage after it).
func TestUnknownFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listn", "x"}, "unknown flag --listn (did you mean --listen?)"},
		{[]string{"-upstrem", "a:1"}, "unknown flag --upstrem (did you mean --upstream?)"},
		{[]string{"--admin-auth-tokenfile", "f"}, "unknown flag --admin-auth-tokenfile (did you mean --admin-auth-token-file?)"},
		{[]string{"--zzzzzzzz"}, "unknown flag --zzzzzzzz (every flag: streamshift run --help-all)"},
		{[]string{"--limits.request-timeout", "3s"}, "unknown flag --limits.request-timeout (the key limits.request-timeout is set with --request-timeout)"},
		{[]string{"--capture.file", "x"}, "unknown flag --capture.file (the key capture.file is set with --capture-file)"},
		{[]string{"--listen"}, "flag --listen needs a value (--listen HOST:PORT)"},
		{[]string{"--admin-pprof", "false"}, `unexpected argument "false": a switch takes its value with = (--admin-pprof=false)`},
		{[]string{"kafka:9092"}, `unexpected argument "kafka:9092": flags start with --, and streamshift run takes no arguments`},
	} {
		var out bytes.Buffer
		_, _, err := Load(tc.args, nil, &out)
		var ue *UsageError
		if !errors.As(err, &ue) || err.Error() != tc.want {
			t.Errorf("%v: %v, want usage error %q", tc.args, err, tc.want)
		}
		if out.Len() > 0 {
			t.Errorf("%v: Load wrote %q; the usage is the caller's", tc.args, out.String())
		}
	}
}

// TestBoolFlags: a bool key's flag alone turns it on, =false off.
func TestBoolFlags(t *testing.T) {
	cfg, _, err := Load([]string{"--upstream", "a:1", "--admin-pprof"}, nil, &bytes.Buffer{})
	if err != nil || !cfg.Admin.Pprof {
		t.Fatalf("--admin-pprof: %v %+v", err, cfg)
	}
	cfg, _, err = Load([]string{"--upstream", "a:1", "--admin-pprof=false"}, []string{"STREAMSHIFT_ADMIN_PPROF=true"}, &bytes.Buffer{})
	if err != nil || cfg.Admin.Pprof {
		t.Fatalf("--admin-pprof=false over the variable: %v %+v", err, cfg)
	}
}

// TestEveryKeyHasAFlag: an operator can set any key on the command line,
// as Kafka's tools take any property; a key without a named flag gets its
// key with "." as "-".
func TestEveryKeyHasAFlag(t *testing.T) {
	cl := newCommandLine()
	for _, key := range knownKeys() {
		f := flagOf(key)
		if f == "" || cl.fs.Lookup(f) == nil {
			t.Errorf("%s has no flag", key)
		}
	}
	cfg, _, err := Load([]string{"--upstream", "k:9092", "--coordinator-durable-log=false", "--streams-session-timeout-ms", "50000"}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Coordinator.DurableLog || cfg.Streams.SessionTimeout != "50000" {
		t.Errorf("derived flags not applied: durable-log %v, session %s", cfg.Coordinator.DurableLog, cfg.Streams.SessionTimeout)
	}
}
