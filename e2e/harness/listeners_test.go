package harness

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/streamshift/streamshift/config"
)

// TestOwnListenerEnv: a streamshift started with OwnListenerEnv binds no
// fixed default port (the admin listener is off whatever the test
// process's environment says, the internal listener takes a free port by
// default), and a test's own later setting still wins.
func TestOwnListenerEnv(t *testing.T) {
	own, err := OwnListenerEnv()
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"STREAMSHIFT_UPSTREAM=127.0.0.1:9092"}
	def, _, err := config.Load(nil, base, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The test process's environment comes before OwnListenerEnv.
	env := append(append(append(base, os.Environ()...), "STREAMSHIFT_ADMIN_LISTEN=127.0.0.1:19080"), own...)
	cfg, _, err := config.Load(nil, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AdminListen != "" {
		t.Errorf("admin listener %q, want none", cfg.AdminListen)
	}
	// The default internal listener is no fixed port: the system picks one.
	if _, port, _ := strings.Cut(def.ClusterListen(), ":"); port != "0" {
		t.Errorf("internal listener by default on %s, want port 0", def.ClusterListen())
	}
	cfg, _, err = config.Load([]string{"--admin-listen", "127.0.0.1:1234"}, append(env, "STREAMSHIFT_CLUSTER_LISTEN=127.0.0.1:5678"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AdminListen != "127.0.0.1:1234" || cfg.ClusterListen() != "127.0.0.1:5678" {
		t.Errorf("a test's own listeners: admin %q, internal %q; want 127.0.0.1:1234, 127.0.0.1:5678", cfg.AdminListen, cfg.ClusterListen())
	}
}
