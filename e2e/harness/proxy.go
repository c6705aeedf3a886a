package harness

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	// Upstream is the broker's bootstrap address; required unless
	// UpstreamConfig is set.
	Upstream string
	// UpstreamConfig is a Kafka client properties file passed as
	// --upstream-config (its bootstrap.servers the upstream when Upstream
	// is empty).
	UpstreamConfig string
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
	// NoFile, when set, is the descriptor limit (soft and hard) the proxy
	// runs under (prlimit --nofile): a connection flood then reaches it
	// with a few thousand connects.
	NoFile int
}

// Proxy is a running `streamshift run` process on loopback.
type Proxy struct {
	Bootstrap string // 127.0.0.1:<port>
	Log       string

	mu sync.Mutex // guards p: Restart replaces it while watchers read it
	p  *proc

	// What Restart starts again: the same binary, ports and settings.
	bin   string
	args  []string
	env   []string
	ready time.Duration
	probe []kgo.Opt
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
// loopback ports (the e2e broker is node 1, served on node-port-base + 1),
// without an admin listener unless o.Args or o.Env name one
// (OwnListenerEnv), and waits until it answers ApiVersions and Metadata.
func StartProxy(ctx context.Context, o ProxyOptions) (*Proxy, error) {
	if o.Dir == "" || (o.Upstream == "" && o.UpstreamConfig == "") {
		return nil, fmt.Errorf("proxy: Dir and Upstream (or UpstreamConfig) are required")
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
	px := &Proxy{Bootstrap: "127.0.0.1:" + strconv.Itoa(ports[0]), Log: filepath.Join(o.Dir, "streamshift.log"),
		bin: bin, ready: cmp.Or(o.ReadyTimeout, 60*time.Second), probe: o.Probe}
	upstream := []string{"--upstream", o.Upstream}
	switch {
	case o.UpstreamConfig != "" && o.Upstream != "":
		upstream = append(upstream, "--upstream-config", o.UpstreamConfig)
	case o.UpstreamConfig != "":
		upstream = []string{"--upstream-config", o.UpstreamConfig}
	}
	px.args = slices.Concat([]string{"run"}, upstream, []string{"--listen", px.Bootstrap,
		"--node-port-base", strconv.Itoa(ports[1] - 1), "--node-id-min", "1", "--node-id-max", "1",
		"--proxy-id", "e2e"}, o.Args)
	if o.NoFile > 0 {
		// prlimit execs the binary: the PID stays the proxy's.
		n := strconv.Itoa(o.NoFile)
		px.args = append([]string{"--nofile=" + n + ":" + n, "--", px.bin}, px.args...)
		px.bin = "prlimit"
	}
	own, err := OwnListenerEnv()
	if err != nil {
		return nil, err
	}
	// The in-memory log unless a test asks for the durable one (the
	// default of `streamshift run`), and no fixed default port unless a
	// test names one (o.Env, o.Args): later entries win, flags over all.
	px.env = slices.Concat([]string{"STREAMSHIFT_COORDINATOR_DURABLE_LOG=false"}, Environ(), own, StreamsEnv(o.Streams), o.Env)
	if err := px.start(ctx, os.O_TRUNC); err != nil {
		return nil, err
	}
	return px, nil
}

// start runs the proxy process (its log truncated or appended to, by flag)
// and waits until it answers.
func (px *Proxy) start(ctx context.Context, logFlag int) error {
	logf, err := os.OpenFile(px.Log, os.O_CREATE|os.O_WRONLY|logFlag, 0o644)
	if err != nil {
		return fmt.Errorf("proxy log: %w", err)
	}
	cmd := exec.Command(px.bin, px.args...)
	cmd.Env = px.env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start streamshift: %w", err)
	}
	p := &proc{name: "streamshift", cmd: cmd, done: make(chan struct{})}
	px.mu.Lock()
	px.p = p
	px.mu.Unlock()
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	if err := WaitKafkaReady(ctx, px.Bootstrap, px.ready, p.done, px.probe...); err != nil {
		_ = p.stop(20 * time.Second)
		return fmt.Errorf("streamshift (log %s): %w", px.Log, err)
	}
	return nil
}

// Restart starts the proxy again on the same ports with the same settings
// (appending to its log) after it exited; a running proxy is stopped first.
func (px *Proxy) Restart(ctx context.Context) error {
	_ = px.Stop()
	return px.start(ctx, os.O_APPEND)
}

// ExitErr is the proxy's exit status once it has ended (nil: exit code 0
// or still running).
func (px *Proxy) ExitErr() error {
	p := px.proc()
	if !p.exited() {
		return nil
	}
	return p.err
}

// Done is closed when the proxy process ends.
func (px *Proxy) Done() <-chan struct{} { return px.proc().done }

// proc is the current process (Restart replaces it).
func (px *Proxy) proc() *proc {
	px.mu.Lock()
	defer px.mu.Unlock()
	return px.p
}

// PID is the proxy's process id.
func (px *Proxy) PID() int { return px.proc().pid() }

// Exited reports whether the proxy has ended.
func (px *Proxy) Exited() bool { return px.proc().exited() }

// Stop stops the proxy by PID: TERM, then KILL after 20s.
func (px *Proxy) Stop() error { return px.proc().stop(20 * time.Second) }

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

// testKnobPrefixes name the suite's own environment knobs
// (STREAMSHIFT_E2E_*, STREAMSHIFT_SCALE_*, STREAMSHIFT_BENCH*): they share
// streamshift's STREAMSHIFT_ prefix but are no configuration keys, and a
// streamshift that inherited them would warn of each as unknown.
var testKnobPrefixes = []string{"STREAMSHIFT_E2E_", "STREAMSHIFT_SCALE_", "STREAMSHIFT_BENCH"}

// Environ is this process's environment for a process the suite starts
// (a streamshift, a benchmark's load generator): all of it but the suite's
// own knobs; a child's own knob is added after it.
func Environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !slices.ContainsFunc(testKnobPrefixes, func(p string) bool { return strings.HasPrefix(kv, p) }) {
			env = append(env, kv)
		}
	}
	return env
}
