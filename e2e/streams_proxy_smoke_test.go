//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
)

// streamshiftProc is the streamshift binary (`streamshift run`) in front of
// an upstream, restartable on the same ports.
type streamshiftProc struct {
	t        testing.TB
	bin, dir string
	args     []string
	env      []string
	listen   string
	// probe are the readiness probe's client options: SASL in front of
	// a broker that wants it.
	probe  []kgo.Opt
	cmd    *exec.Cmd
	died   chan struct{}
	logf   *os.File
	starts int
}

// throughStreamshift is a Scenario.Route that puts streamshift (the streams
// coordinator with nativeTestSettings) between the apps and the scenario's
// broker, stopped when the test ends.
//
// E2E_STREAMSHIFT_ENV adds settings (space-separated NAME=value), e.g. Kafka
// 4.4's behaviour for a before/after run:
// "STREAMSHIFT_STREAMS_NUM_WARMUP_REPLICAS=0 STREAMSHIFT_STREAMS_RECONCILIATION_HEARTBEAT_INTERVAL_MS=5000".
func throughStreamshift(proxyID string) func(context.Context, *harness.Run) (string, error) {
	return func(ctx context.Context, r *harness.Run) (string, error) {
		env := append(append([]string{}, nativeTestSettings...), strings.Fields(os.Getenv("E2E_STREAMSHIFT_ENV"))...)
		addr, stop := startStreamshift(ctx, r.T, r.Dir, r.Broker.Bootstrap, proxyID, env...)
		r.T.Cleanup(stop)
		return addr, nil
	}
}

// startStreamshift builds and starts streamshift in front of upstream,
// logging to dir/streamshift.log, and returns its bootstrap address once it
// answers Kafka requests, and a stop function.
func startStreamshift(ctx context.Context, t testing.TB, dir, upstream, proxyID string, env ...string) (string, func()) {
	p := newStreamshift(ctx, t, dir, upstream, proxyID, env...)
	return p.listen, p.stop
}

func newStreamshift(ctx context.Context, t testing.TB, dir, upstream, proxyID string, env ...string) *streamshiftProc {
	t.Helper()
	bin := filepath.Join(dir, "streamshift")
	if err := harness.GoBuild(filepath.Dir(harness.Root()), "./cmd/streamshift", bin); err != nil {
		t.Fatal(err)
	}
	ports, err := harness.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	listen := "127.0.0.1:" + strconv.Itoa(ports[0])
	// No admin listener and the internal one on a port of its own unless
	// the test names them (env, later, wins).
	own, err := harness.OwnListenerEnv()
	if err != nil {
		t.Fatal(err)
	}
	// The e2e broker is node 1: its port is node-port-base + 1.
	p := &streamshiftProc{t: t, bin: bin, dir: dir, env: slices.Concat(own, env), listen: listen, args: []string{"run", "--upstream", upstream, "--listen", listen,
		"--node-port-base", strconv.Itoa(ports[1] - 1), "--node-id-min", "1", "--node-id-max", "1",
		"--proxy-id", proxyID, "--log-level", "debug"}}
	if err := p.start(ctx); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *streamshiftProc) start(ctx context.Context) error {
	p.starts++
	logf, err := os.Create(filepath.Join(p.dir, fmt.Sprintf("streamshift-%d.log", p.starts)))
	if err != nil {
		return err
	}
	cmd := exec.Command(p.bin, p.args...)
	// The in-memory log unless the test asks for the durable one (the
	// default of `streamshift run`): later entries win.
	cmd.Env = append(append([]string{"STREAMSHIFT_COORDINATOR_DURABLE_LOG=false"}, harness.Environ()...), p.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	died := make(chan struct{})
	go func() { _ = cmd.Wait(); close(died) }()
	p.cmd, p.died, p.logf = cmd, died, logf
	if err := harness.WaitKafkaReady(ctx, p.listen, 60*time.Second, died, p.probe...); err != nil {
		p.stop()
		return fmt.Errorf("streamshift: %v (log in %s)", err, logf.Name())
	}
	return nil
}

func (p *streamshiftProc) stop() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.died:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.died
	}
	p.logf.Close()
	p.cmd = nil
}

// kill9 crashes streamshift.
func (p *streamshiftProc) kill9() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.died
	p.logf.Close()
	p.cmd = nil
}

// TestStreamsProxySmoke: one Kafka Streams 4.4 app with group.protocol=streams
// and exactly-once runs through streamshift against a Kafka 3.9 broker, which
// has never heard of streams groups. The output is verified exactly, and the
// upstream shows what streamshift promises: the anchor member in the classic
// group (protocol streamshift) and the app's committed offsets, readable by
// any lag tool.
func TestStreamsProxySmoke(t *testing.T) {
	t.Parallel()
	const group = "e2e-count"
	var upstream string
	harness.RunScenario(t, harness.Scenario{
		Name:          "streams through streamshift on 3.9",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App44,
		GroupProtocol: "streams",
		Guarantee:     "exactly_once_v2",
		Hold:          5 * time.Second,
		Route: func(ctx context.Context, r *harness.Run) (string, error) {
			upstream = r.Broker.Bootstrap
			addr, stop := startStreamshift(ctx, r.T, r.Dir, upstream, "smoke", nativeTestSettings...)
			r.T.Cleanup(stop)
			return addr, nil
		},
		Steps: []harness.Step{
			harness.StartInstances("a1"),
			{Name: "offsets and anchor upstream", Do: func(ctx context.Context, r *harness.Run) error {
				return checkUpstreamGroup(ctx, upstream, group, "streamshift-smoke")
			}},
		},
	})
}

// checkUpstreamGroup asks the broker directly (not through the proxy) for
// the group: one member, the anchor, with protocol streamshift, and
// committed offsets for every input partition.
func checkUpstreamGroup(ctx context.Context, upstream, group, anchorID string) error {
	return waitUpstreamGroup(ctx, upstream, group, 30*time.Second, func(g kadm.DescribedGroup) error {
		if g.Protocol != "streamshift" || g.ProtocolType != "consumer" || len(g.Members) != 1 || g.State != "Stable" {
			return fmt.Errorf("upstream group: state %s, protocol %s/%s, %d members; want Stable consumer/streamshift with the anchor only", g.State, g.ProtocolType, g.Protocol, len(g.Members))
		}
		if id := g.Members[0].InstanceID; id == nil || *id != anchorID {
			return fmt.Errorf("upstream group member instance id %v, want %s", id, anchorID)
		}
		return nil
	})
}

// waitUpstreamGroup polls the broker directly (not through the proxy) until
// the group passes check and has committed offsets for every partition of
// e2e-input, at most for timeout.
func waitUpstreamGroup(ctx context.Context, upstream, group string, timeout time.Duration, check func(kadm.DescribedGroup) error) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(upstream))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		last = func() error {
			described, err := adm.DescribeGroups(ctx, group)
			if err != nil {
				return fmt.Errorf("describe upstream group: %w", err)
			}
			g := described[group]
			if g.Err != nil {
				return fmt.Errorf("describe upstream group: %w", g.Err)
			}
			if err := check(g); err != nil {
				return err
			}
			offsets, err := adm.FetchOffsets(ctx, group)
			if err != nil {
				return fmt.Errorf("fetch upstream offsets: %w", err)
			}
			if err := offsets.Error(); err != nil {
				return fmt.Errorf("fetch upstream offsets: %w", err)
			}
			for p := int32(0); p < 4; p++ {
				o, ok := offsets.Lookup("e2e-input", p)
				if !ok || o.At <= 0 {
					return fmt.Errorf("no committed offset upstream for e2e-input-%d (%+v)", p, o)
				}
			}
			return nil
		}()
		if last == nil {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return last
}

// nativeTestSettings are the streams-group settings the e2e 4.4 broker runs
// with (e2e/config/server-4.4.properties), so timings compare.
var nativeTestSettings = []string{
	"STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS=10000",
	"STREAMSHIFT_STREAMS_MIN_SESSION_TIMEOUT_MS=10000",
	"STREAMSHIFT_STREAMS_INITIAL_REBALANCE_DELAY_MS=0",
	"STREAMSHIFT_STREAMS_ASSIGNMENT_INTERVAL_MS=0",
}

// TestStreamsProxyScale runs the baseline steps (1 → 3 instances → kill -9
// one) of the native 4.4 baseline through streamshift on Kafka 3.9, exactly
// once, output verified exactly.
func TestStreamsProxyScale(t *testing.T) {
	t.Parallel()
	harness.RunScenario(t, harness.Scenario{
		Name:          "streams through streamshift on 3.9, scale and crash",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App44,
		GroupProtocol: "streams",
		Guarantee:     "exactly_once_v2",
		Route:         throughStreamshift("scale"),
		Steps: []harness.Step{
			harness.StartInstances("a1"),
			harness.StartInstances("a2", "a3"),
			harness.Kill9Instance("a3"),
		},
	})
}

// TestStreamsProxyRestart: streamshift crashes (kill -9) under two running
// Kafka Streams instances and comes back on the same ports without its
// in-memory state. The members must be told UNKNOWN_MEMBER_ID (never the
// fatal GROUP_ID_NOT_FOUND), rejoin, and carry on; the anchor takes its
// place back upstream (static instance id) and the output stays exact.
func TestStreamsProxyRestart(t *testing.T) {
	t.Parallel()
	testStreamsProxyRestart(t, "restart", false)
}

// TestStreamsProxyRestartDurable: the same crash with the durable group log
// (coordinator.durable-log): the restarted streamshift reads its groups back
// and the members carry on without losing their tasks.
func TestStreamsProxyRestartDurable(t *testing.T) {
	t.Parallel()
	testStreamsProxyRestart(t, "durable", true)
}

// restartGroupConfig is a group config that changes nothing the restart
// tests look at: it only has to come back.
const restartGroupConfig = "streams.acceptable.recovery.lag=20000"

func testStreamsProxyRestart(t *testing.T, proxyID string, durable bool) {
	var ss *streamshiftProc
	env := append([]string{}, nativeTestSettings...)
	if durable {
		// The cluster id names the anchors' static id with the durable log.
		env = append(env, "STREAMSHIFT_COORDINATOR_DURABLE_LOG=true", "STREAMSHIFT_COORDINATOR_CLUSTER_ID="+proxyID)
	}
	harness.RunScenario(t, harness.Scenario{
		Name:          fmt.Sprintf("streams through streamshift on 3.9, streamshift restarted (durable log %t)", durable),
		Broker:        harness.Kafka39,
		AppBuild:      harness.App44,
		GroupProtocol: "streams",
		Guarantee:     "exactly_once_v2",
		Hold:          5 * time.Second,
		Route: func(ctx context.Context, r *harness.Run) (string, error) {
			ss = newStreamshift(ctx, r.T, r.Dir, r.Broker.Bootstrap, proxyID, env...)
			r.T.Cleanup(ss.stop)
			return ss.listen, nil
		},
		Steps: []harness.Step{
			harness.StartInstances("a1", "a2"),
			{Name: "kafka-configs sets a group config through streamshift", Do: func(ctx context.Context, r *harness.Run) error {
				_, err := harness.RunTool(ctx, r.Dir, "kafka-configs", "--bootstrap-server", ss.listen, "--entity-type", "groups",
					"--entity-name", "e2e-count", "--alter", "--add-config", restartGroupConfig)
				return err
			}},
			{Name: "kill -9 streamshift, start it again", Do: func(ctx context.Context, r *harness.Run) error {
				ss.kill9()
				return ss.start(ctx)
			}},
			{Name: "offsets and anchor upstream", Do: func(ctx context.Context, r *harness.Run) error {
				if err := checkUpstreamGroup(ctx, r.Broker.Bootstrap, "e2e-count", "streamshift-"+proxyID); err != nil {
					return err
				}
				if n := dirtyCloses(r, "a1", "a2"); durable && n > 0 {
					return fmt.Errorf("%d tasks closed dirty although the group log is durable", n)
				}
				if !durable {
					return nil // in-memory group configs are lost with the process (README: limits)
				}
				out, err := harness.RunTool(ctx, r.Dir, "kafka-configs", "--bootstrap-server", ss.listen, "--entity-type", "groups",
					"--entity-name", "e2e-count", "--describe")
				if err != nil {
					return err
				}
				if !strings.Contains(out, restartGroupConfig) {
					return fmt.Errorf("the group config set before the restart is gone although the group log is durable:\n%s", out)
				}
				return nil
			}},
		},
	})
}

// dirtyCloses counts the tasks the named instances closed dirty so far.
func dirtyCloses(r *harness.Run, names ...string) int {
	n := 0
	for _, name := range names {
		a, err := r.App(name)
		if err != nil {
			continue
		}
		for _, ev := range a.Events() {
			if ev.Kind == "task_closed" && !ev.Clean {
				n++
			}
		}
	}
	return n
}

// TestStreamsProxyOfflineMigration: a Kafka Streams app runs on the classic
// protocol through streamshift (forwarded: the group is the upstream's), is
// stopped (the classic group is Empty, its offsets stay), and comes back with
// group.protocol=streams: streamshift takes the Empty group over (offline
// migration), the app resumes from the committed offsets and its changelog,
// and the output is exact across the switch.
func TestStreamsProxyOfflineMigration(t *testing.T) {
	t.Parallel()
	harness.RunScenario(t, harness.Scenario{
		Name:          "offline migration classic → streams through streamshift on 3.9",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App44,
		GroupProtocol: "classic",
		Guarantee:     "exactly_once_v2",
		Hold:          5 * time.Second,
		Route:         throughStreamshift("migrate"),
		Steps: []harness.Step{
			// Kafka Streams does not leave a classic group on close: its
			// member stays until the session timeout, and the group is not
			// Empty before (Kafka refuses the streams join until then too).
			harness.StartInstanceWith("c1", func(o *harness.AppOptions) { o.Extra = append(o.Extra, "session.timeout.ms=10000") }),
			{Name: "stop c1, wait for the Empty classic group, start s1 on the streams protocol", Do: func(ctx context.Context, r *harness.Run) error {
				if err := r.StopApp("c1"); err != nil {
					return err
				}
				if err := waitUpstreamGroupState(ctx, r.Broker.Bootstrap, "e2e-count", "Empty"); err != nil {
					return err
				}
				_, err := r.StartAppWith("s1", func(o *harness.AppOptions) { o.GroupProtocol = "streams" })
				return err
			}},
			{Name: "offsets and anchor upstream", Do: func(ctx context.Context, r *harness.Run) error {
				return checkUpstreamGroup(ctx, r.Broker.Bootstrap, "e2e-count", "streamshift-migrate")
			}},
		},
	})
}

// waitUpstreamGroupState polls the broker until the group is in state.
func waitUpstreamGroupState(ctx context.Context, upstream, group, state string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(upstream))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	last := ""
	for ctx.Err() == nil {
		described, err := adm.DescribeGroups(ctx, group)
		if err == nil {
			if last = described[group].State; last == state {
				return nil
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("upstream group %s is %s, not %s", group, last, state)
}

// restart crashes streamshift (kill -9) and starts it again on the same
// ports, without its in-memory state unless the durable log is on.
func (p *streamshiftProc) restart(ctx context.Context) error {
	p.kill9()
	return p.start(ctx)
}

// waitLog waits until the running streamshift's log has a line containing
// s (it polls: the point is to act right after the line, within ~50 ms).
func (p *streamshiftProc) waitLog(ctx context.Context, s string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	name := p.logf.Name()
	for {
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), s) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %q in %s within %s", s, name, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
