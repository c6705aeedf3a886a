package config

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/knadh/koanf/v2"
)

func TestLoadPrecedence(t *testing.T) {
	path := configFile(t, `
upstream: [a:9092, b:9092]
listen: 127.0.0.1:29092
log:
  level: debug
limits:
  max-inflight-requests: 7
shutdown-timeout: 3s
`)
	env := []string{"STREAMSHIFT_LOG_LEVEL=warn", "STREAMSHIFT_NODE_ID_MAX=9", "STREAMSHIFT_BOGUS=1", "HOME=/x"}
	cfg, warnings, err := Load([]string{"--config", path, "--node-id-max", "5", "--upstream", "c:1,d:2"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Upstream = []string{"c:1", "d:2"} // flag over file
	want.Listen = "127.0.0.1:29092"        // file over default
	want.Log.Level = "warn"                // env over file
	want.NodeIDMax = 5                     // flag over env
	want.Limits.MaxInflightRequests = 7
	want.ShutdownTimeout = 3 * time.Second
	if !reflect.DeepEqual(*cfg, want) {
		t.Errorf("got %+v\nwant %+v", *cfg, want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "STREAMSHIFT_BOGUS") {
		t.Errorf("warnings %v", warnings)
	}
}

// configFile writes yaml to a new configuration file and returns its path.
func configFile(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadErrors(t *testing.T) {
	bad := configFile(t, "upstream: [a:1]\nlisten-typo: x\n")
	dir := filepath.Dir(bad)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no upstream", nil, []string{"upstream: required"}},
		{"unknown file key", []string{"--config", bad}, []string{"listen-typo: unknown key (from config file"}},
		{"missing file", []string{"--config", filepath.Join(dir, "none.yaml")}, []string{"none.yaml\": cannot be read"}},
		{"wildcard listen", []string{"--upstream", "a:1", "--listen", "0.0.0.0:9092"}, []string{"advertised-host: required"}},
		{"ports collide", []string{"--upstream", "a:1", "--listen", "127.0.0.1:9092", "--node-port-base", "9090"}, []string{"include the listen port 9092"}},
		{"ports overflow", []string{"--upstream", "a:1", "--listen", "127.0.0.1:65530"}, []string{"outside 1..65535"}},
		{"bad values", []string{"--upstream", "a", "--log-format", "xml", "--max-inflight-requests", "0", "--shutdown-timeout", "-1s"},
			[]string{`upstream "a"`, `log.format "xml"`, "max-inflight-requests: must be >= 1", "shutdown-timeout: must be positive"}},
		{"not a number", []string{"--upstream", "a:1", "--node-id-max", "many"}, []string{"node-id-max"}},
		{"answer bound too small", []string{"--upstream", "a:1", "--max-answer-bytes", "1000"},
			[]string{"limits.max-answer-bytes: must be >= 1048576, got 1000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Load(tc.args, nil, io.Discard)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestFlatSection shows how the streams section is read: Kafka's dotted names
// relative to the section, from YAML nesting or the environment alike.
func TestFlatSection(t *testing.T) {
	type section struct {
		SessionTimeoutMs int `koanf:"session.timeout.ms"`
	}
	k := koanf.New(".")
	if err := k.Set("streams.session.timeout.ms", "45000"); err != nil {
		t.Fatal(err)
	}
	var s section
	if err := k.UnmarshalWithConf("streams", &s, koanf.UnmarshalConf{FlatPaths: true, DecoderConfig: decoderConfig(&s)}); err != nil {
		t.Fatal(err)
	}
	if s.SessionTimeoutMs != 45000 {
		t.Fatalf("got %d", s.SessionTimeoutMs)
	}
	if got := envName("streams.session.timeout.ms"); got != "STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS" {
		t.Fatalf("env name %s", got)
	}
}

func TestSettingsDocumentEveryKey(t *testing.T) {
	for _, s := range Settings() {
		if s.Env == "" || s.Key == "" {
			t.Errorf("incomplete setting %+v", s)
		}
	}
	if len(Settings()) != len(knownKeys()) {
		t.Fatal("settings and keys differ")
	}
}
