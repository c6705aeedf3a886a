package config

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestLoadProblems: every configuration error has one shape, `key "value":
// what is wrong (from where)`, whichever source the value came from, every
// problem at once, one a line, and no decoder text.
func TestLoadProblems(t *testing.T) {
	small := configFile(t, "upstream: [a:1]\nlimits:\n  request-timeout: 30\n")
	file := configFile(t, "upstream: [a:1]\nlimits:\n  request-timeout: 30\n  max-frame-bytes: 1.5\nlistn: x\nshutdown-timeout: -1s\nadmin:\n  pprof: maybe\n")
	for _, tc := range []struct {
		name      string
		args, env []string
		want      []string
	}{
		{"duration without unit, environment", nil, []string{"STREAMSHIFT_LIMITS_REQUEST_TIMEOUT=30"},
			[]string{`limits.request-timeout "30": a duration needs a unit, e.g. 30s or 500ms (from environment STREAMSHIFT_LIMITS_REQUEST_TIMEOUT)`}},
		{"duration without unit, flag", []string{"--request-timeout", "30"}, nil,
			[]string{`limits.request-timeout "30": a duration needs a unit, e.g. 30s or 500ms (from --request-timeout)`}},
		{"not a duration", []string{"--shutdown-timeout=soon"}, nil,
			[]string{`shutdown-timeout "soon": not a duration; write it like 30s, 500ms or 5m (from --shutdown-timeout)`}},
		{"number with a unit", []string{"--max-frame-bytes", "1MB"}, nil,
			[]string{`limits.max-frame-bytes "1MB": a whole number, e.g. 1048576 (no units) (from --max-frame-bytes)`}},
		{"out of int32", nil, []string{"STREAMSHIFT_NODE_ID_MAX=9999999999"},
			[]string{`node-id-max "9999999999": out of range (-2147483648..2147483647) (from environment STREAMSHIFT_NODE_ID_MAX)`}},
		{"not a bool", nil, []string{"STREAMSHIFT_COORDINATOR_DURABLE_LOG=yes"},
			[]string{`coordinator.durable-log "yes": want true or false (from environment STREAMSHIFT_COORDINATOR_DURABLE_LOG)`}},
		{"streams ms", nil, []string{"STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS=45s"},
			[]string{`streams.session.timeout.ms "45s": a whole number of milliseconds (Kafka's unit for *.ms), e.g. 45000 (from environment STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS)`}},
		{"capture API name", nil, []string{"STREAMSHIFT_CAPTURE_API_KEYS=JoinGroup,Bogus"},
			[]string{`capture.api-keys "JoinGroup,Bogus": unknown API "Bogus" (want a key or a name such as JoinGroup) (from environment STREAMSHIFT_CAPTURE_API_KEYS)`}},
		{"out of bounds, environment", nil, []string{"STREAMSHIFT_LIMITS_MAX_INFLIGHT_REQUESTS=0"},
			[]string{"limits.max-inflight-requests: must be >= 1, got 0 (from environment STREAMSHIFT_LIMITS_MAX_INFLIGHT_REQUESTS)"}},
		{"out of bounds, flag", []string{"--event-loops", "-1"}, nil,
			[]string{"event-loops: must be >= 0, got -1 (from --event-loops)"}},
		{"file, every problem", []string{"--config", file}, nil, []string{
			`admin.pprof "maybe": want true or false (from config file ` + file + `)`,
			`limits.max-frame-bytes "1.5": a whole number, e.g. 1 (from config file ` + file + `)`,
			`limits.request-timeout "30": a duration needs a unit, e.g. 30s or 500ms (from config file ` + file + `)`,
			`listn: unknown key (did you mean listen?) (from config file ` + file + `)`,
			`shutdown-timeout: must be positive, got -1s (from config file ` + file + `)`,
		}},
		{"flag over file", []string{"--config", small, "--request-timeout", "5"}, nil,
			[]string{`limits.request-timeout "5": a duration needs a unit, e.g. 30s or 500ms (from --request-timeout)`}},
		{"file unreadable", []string{"--config", file + ".missing"}, nil,
			[]string{`config "` + file + `.missing": cannot be read: no such file or directory (from --config)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if !strings.Contains(strings.Join(args, " "), "--config") {
				args = append([]string{"--upstream", "a:1"}, args...)
			}
			_, _, err := Load(args, tc.env, &bytes.Buffer{})
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("error %v (%T), want Problems", err, err)
			}
			got := strings.Split(err.Error(), "\n")
			for _, w := range tc.want {
				found := false
				for _, g := range got {
					found = found || g == w
				}
				if !found {
					t.Errorf("no line\n  %s\nin\n  %s", w, strings.Join(got, "\n  "))
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("%d lines, want %d:\n  %s", len(got), len(tc.want), strings.Join(got, "\n  "))
			}
			for _, decoder := range []string{"decoding", "strconv", "mapstructure", "time: ", "error(s)"} {
				if strings.Contains(err.Error(), decoder) {
					t.Errorf("decoder text %q in %q", decoder, err)
				}
			}
		})
	}
}

func TestClosest(t *testing.T) {
	names := []string{"listen", "admin-listen", "upstream", "log-level"}
	for typo, want := range map[string]string{"listn": "listen", "lisen": "listen", "upstraem": "upstream", "admin-lisen": "admin-listen", "xyz": "", "loglevel": "log-level"} {
		if got := closest(typo, names); got != want {
			t.Errorf("closest(%q) = %q, want %q", typo, got, want)
		}
	}
}
