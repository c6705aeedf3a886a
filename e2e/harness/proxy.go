package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ProxyOptions configure StartProxy.
type ProxyOptions struct {
	// Dir holds the binary's log (streamshift.log); required.
	Dir string
	// Upstream is the broker's bootstrap address; required.
	Upstream string
	// Streams are streamshift's `streams:` settings by Kafka's name without
	// "group.streams." (e.g. "session.timeout.ms": "10000"), passed as
	// STREAMSHIFT_STREAMS_* variables.
	Streams map[string]string
	// Args are more `streamshift run` flags.
	Args []string
	// Env are more STREAMSHIFT_* variables (keys without a flag: tls.*).
	Env []string
	// Probe are options of the readiness probe's client: TLS and SASL
	// for a proxy with TLS listeners.
	Probe []kgo.Opt
	// ReadyTimeout bounds the wait for the proxy to answer (default 60s).
	ReadyTimeout time.Duration
}

// Proxy is a running `streamshift run` process on loopback.
type Proxy struct {
	Bootstrap string // 127.0.0.1:<port>
	Log       string
	p         *proc
}

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

// BuildStreamshift builds ./cmd/streamshift once per test process into dir
// (the first caller's) and returns the binary's path.
func BuildStreamshift(dir string) (string, error) {
	buildOnce.Do(func() {
		buildBin = filepath.Join(dir, "streamshift")
		buildErr = GoBuild(filepath.Dir(Root()), "./cmd/streamshift", buildBin)
	})
	return buildBin, buildErr
}

// GoBuild builds the Go package pkg of the module at moduleDir into bin.
func GoBuild(moduleDir, pkg, bin string) error {
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = moduleDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s in %s: %v\n%s", pkg, moduleDir, err, out)
	}
	return nil
}

// StreamsEnv turns streams settings into STREAMSHIFT_STREAMS_* variables,
// sorted by name.
func StreamsEnv(streams map[string]string) []string {
	env := make([]string, 0, len(streams))
	for k, v := range streams {
		name := "STREAMSHIFT_STREAMS_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(k))
		env = append(env, name+"="+v)
	}
	sort.Strings(env)
	return env
}

// StartProxy builds and starts streamshift in front of o.Upstream on free
// loopback ports (the e2e broker is node 1, served on node-port-base + 1)
// and waits until it answers ApiVersions and Metadata.
func StartProxy(ctx context.Context, o ProxyOptions) (*Proxy, error) {
	if o.Dir == "" || o.Upstream == "" {
		return nil, fmt.Errorf("proxy: Dir and Upstream are required")
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("proxy dir: %w", err)
	}
	bin, err := BuildStreamshift(o.Dir)
	if err != nil {
		return nil, err
	}
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	px := &Proxy{Bootstrap: "127.0.0.1:" + strconv.Itoa(ports[0]), Log: filepath.Join(o.Dir, "streamshift.log")}
	args := append([]string{"run", "--upstream", o.Upstream, "--listen", px.Bootstrap,
		"--node-port-base", strconv.Itoa(ports[1] - 1), "--node-id-min", "1", "--node-id-max", "1",
		"--proxy-id", "e2e"}, o.Args...)
	logf, err := os.Create(px.Log)
	if err != nil {
		return nil, fmt.Errorf("proxy log: %w", err)
	}
	cmd := exec.Command(bin, args...)
	// The in-memory log unless a test asks for the durable one (the
	// default of `streamshift run`): later entries win.
	cmd.Env = append(append(append([]string{"STREAMSHIFT_COORDINATOR_DURABLE_LOG=false"}, os.Environ()...), StreamsEnv(o.Streams)...), o.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start streamshift: %w", err)
	}
	px.p = &proc{name: "streamshift", cmd: cmd, done: make(chan struct{})}
	go func() {
		px.p.err = cmd.Wait()
		logf.Close()
		close(px.p.done)
	}()
	timeout := o.ReadyTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	if err := WaitKafkaReady(ctx, px.Bootstrap, timeout, px.p.done, o.Probe...); err != nil {
		_ = px.Stop()
		return nil, fmt.Errorf("streamshift (log %s): %w", px.Log, err)
	}
	return px, nil
}

// PID is the proxy's process id.
func (px *Proxy) PID() int { return px.p.pid() }

// Exited reports whether the proxy has ended.
func (px *Proxy) Exited() bool { return px.p.exited() }

// Stop stops the proxy by PID: TERM, then KILL after 20s.
func (px *Proxy) Stop() error { return px.p.stop(20 * time.Second) }

// ProxyRoute is a Scenario.Route that starts streamshift in front of the
// run's broker (logs in <run dir>/proxy) with the given streams settings;
// it is stopped after the apps, before the broker (Run.Proxy returns it).
func ProxyRoute(streams map[string]string, args ...string) func(ctx context.Context, r *Run) (string, error) {
	return func(ctx context.Context, r *Run) (string, error) {
		px, err := StartProxy(ctx, ProxyOptions{Dir: filepath.Join(r.Dir, "proxy"), Upstream: r.Broker.Bootstrap, Streams: streams, Args: args})
		if err != nil {
			return "", err
		}
		r.onCleanup(func() { _ = px.Stop() })
		runProxies.Store(r, px)
		r.onCleanup(func() { runProxies.Delete(r) })
		return px.Bootstrap, nil
	}
}

// Proxy returns the streamshift process ProxyRoute started, or nil.
func (r *Run) Proxy() *Proxy {
	if px, ok := runProxies.Load(r); ok {
		return px.(*Proxy)
	}
	return nil
}

// runProxies maps a *Run to the *Proxy its route started.
var runProxies sync.Map

// Streams44TestSettings are the streams-group settings of the native 4.4
// broker's test configuration (e2e/config/server-4.4.properties), as
// streamshift settings: a proxy scenario compared with native 4.4 runs with
// the same.
var Streams44TestSettings = map[string]string{
	"session.timeout.ms":         "10000",
	"min.session.timeout.ms":     "10000",
	"initial.rebalance.delay.ms": "0",
	"assignment.interval.ms":     "0",
}
