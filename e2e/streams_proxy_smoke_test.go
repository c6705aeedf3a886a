//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
)

// startStreamshift builds and starts the streamshift binary (`streamshift
// run`) in front of upstream, logging to dir/streamshift.log, and returns
// its bootstrap address once it answers Kafka requests.
func startStreamshift(ctx context.Context, t testing.TB, dir, upstream, proxyID string, env ...string) (string, func()) {
	t.Helper()
	bin := filepath.Join(dir, "streamshift")
	build := exec.Command("go", "build", "-o", bin, "./cmd/streamshift")
	build.Dir = filepath.Dir(harness.Root())
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build streamshift: %v\n%s", err, out)
	}
	ports, err := harness.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	listen := "127.0.0.1:" + strconv.Itoa(ports[0])
	logf, err := os.Create(filepath.Join(dir, "streamshift.log"))
	if err != nil {
		t.Fatal(err)
	}
	// The e2e broker is node 1: its port is node-port-base + 1.
	cmd := exec.Command(bin, "run", "--upstream", upstream, "--listen", listen,
		"--node-port-base", strconv.Itoa(ports[1]-1), "--node-id-min", "1", "--node-id-max", "1",
		"--admin-listen", "", "--proxy-id", proxyID, "--log-level", "debug")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	died := make(chan struct{})
	go func() { _ = cmd.Wait(); close(died) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-died:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-died
		}
		logf.Close()
	}
	if err := harness.WaitKafkaReady(ctx, listen, 60*time.Second, died); err != nil {
		stop()
		t.Fatalf("streamshift: %v (log in %s)", err, logf.Name())
	}
	return listen, stop
}

// TestStreamsProxySmoke: one Kafka Streams 4.4 app with group.protocol=streams
// and exactly-once runs through streamshift against a Kafka 3.9 broker, which
// has never heard of streams groups. The output is verified exactly, and the
// upstream shows what streamshift promises: the anchor member in the classic
// group (protocol streamshift) and the app's committed offsets, readable by
// any lag tool.
func TestStreamsProxySmoke(t *testing.T) {
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
			addr, stop := startStreamshift(ctx, r.T, r.Dir, upstream, "smoke",
				"STREAMSHIFT_STREAMS_INITIAL_REBALANCE_DELAY_MS=0")
			r.T.Cleanup(stop)
			return addr, nil
		},
		Steps: []harness.Step{
			harness.StartInstances("a1"),
			{Name: "offsets and anchor upstream", Do: func(ctx context.Context, r *harness.Run) error {
				return checkUpstreamGroup(ctx, upstream, group)
			}},
		},
	})
}

// checkUpstreamGroup asks the broker directly (not through the proxy) for
// the group: one member, the anchor, with protocol streamshift, and
// committed offsets for every input partition.
func checkUpstreamGroup(ctx context.Context, upstream, group string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(upstream))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
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
			if g.Protocol != "streamshift" || g.ProtocolType != "consumer" || len(g.Members) != 1 || g.State != "Stable" {
				return fmt.Errorf("upstream group: state %s, protocol %s/%s, %d members; want Stable consumer/streamshift with the anchor only", g.State, g.ProtocolType, g.Protocol, len(g.Members))
			}
			if id := g.Members[0].InstanceID; id == nil || *id != "streamshift-smoke" {
				return fmt.Errorf("upstream group member instance id %v, want streamshift-smoke", id)
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
		time.Sleep(time.Second)
	}
	return last
}
