package config

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestRunHelpPrintsReference: `streamshift run -h` prints every documented
// key with its variable, and the defaults a user sees: node-port-base as
// listen port + 1, not "0", and no flag typed string.
func TestRunHelpPrintsReference(t *testing.T) {
	var out bytes.Buffer
	if _, _, err := Load([]string{"-h"}, nil, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	help := out.String()
	for _, d := range keyDocs {
		if !strings.Contains(help, d.key) || !strings.Contains(help, envName(d.key)) {
			t.Errorf("-h lacks %s (%s)", d.key, envName(d.key))
		}
	}
	if !strings.Contains(help, "(default: listen port + 1; STREAMSHIFT_NODE_PORT_BASE)") {
		t.Errorf("node-port-base's default is not listen port + 1:\n%s", help)
	}
	if strings.Contains(help, `(default "0")`) || strings.Contains(help, " string\n") {
		t.Errorf("-h shows Go flag defaults:\n%s", help)
	}
}

// TestLoadErrorsNameTheVariable: a bad value names the flag or the
// STREAMSHIFT_ variable the user set, for a value that does not parse and
// for one out of bounds, streams.* included.
func TestLoadErrorsNameTheVariable(t *testing.T) {
	for _, tc := range []struct {
		args, env []string
		want      string
	}{
		{nil, []string{"STREAMSHIFT_LIMITS_MAX_FRAME_BYTES=abc"}, "environment variable STREAMSHIFT_LIMITS_MAX_FRAME_BYTES"},
		{[]string{"--max-frame-bytes", "1x"}, nil, "flag --max-frame-bytes"},
		{nil, []string{"STREAMSHIFT_LIMITS_MAX_INFLIGHT_REQUESTS=0"}, "(from environment variable STREAMSHIFT_LIMITS_MAX_INFLIGHT_REQUESTS)"},
		{nil, []string{"STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS=abc"}, "(from environment variable STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS)"},
		{[]string{"--event-loops", "-1"}, nil, "(from flag --event-loops)"},
	} {
		_, _, err := Load(append([]string{"--upstream", "kafka:9092"}, tc.args...), tc.env, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: %v, want it to name %q", tc.args, tc.env, err, tc.want)
		}
	}
}
