package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// asStreamshift makes the test binary the streamshift command: the demo
// test runs it as a child process with this variable set and streamshift's
// arguments, so the child is the real main (signals, exit code), built from
// the same sources as the test.
const asStreamshift = "DEMO_TEST_BINARY_IS_STREAMSHIFT"

func TestMain(m *testing.M) {
	if os.Getenv(asStreamshift) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// demoShutdownTimeout is the demo's --shutdown-timeout in the test.
const demoShutdownTimeout = 5 * time.Second

// TestDemo starts `streamshift demo --produce words` as a process, produces
// and consumes through its bootstrap address with franz-go, sees the input
// stream flow, joins a streams-protocol group (served by streamshift: the
// embedded cluster plays Kafka 3.9) until it owns the topic's tasks, and
// stops it with SIGTERM: exit code 0 within the shutdown timeout.
func TestDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	d := startDemo(t, "--produce", "words")
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.bootstrap), kgo.ClientID("demo-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	// Produce and consume a record of our own.
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, -1, nil, "check"); err != nil {
		t.Fatalf("create topic through the demo: %v", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "check", Key: []byte("k"), Value: []byte("hello demo")}).FirstErr(); err != nil {
		t.Fatalf("produce through the demo: %v", err)
	}
	got := consume(ctx, t, d.bootstrap, "check", 1)
	if string(got[0].Value) != "hello demo" {
		t.Fatalf("consumed %q, want %q", got[0].Value, "hello demo")
	}

	// The demo's input stream flows: key a word, value a line starting with it.
	for _, r := range consume(ctx, t, d.bootstrap, "words", 5) {
		if k := string(r.Key); k == "" || !strings.HasPrefix(string(r.Value), k+" ") {
			t.Fatalf("input record key %q value %q: want the value to start with the key", r.Key, r.Value)
		}
	}

	// A streams-protocol group over the input topic, served by streamshift.
	versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(versions.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool {
		return k.ApiKey == kmsg.StreamsGroupHeartbeat.Int16()
	}) {
		t.Fatal("the demo's bootstrap does not advertise StreamsGroupHeartbeat")
	}
	tasks := joinStreamsGroup(ctx, t, cl, "demo-app", "words")
	if len(tasks) != 1 || tasks[0].SubtopologyID != "0" || !slices.Equal(tasks[0].Partitions, []int32{0, 1, 2}) {
		t.Fatalf("active tasks %+v, want subtopology 0, partitions 0..2", tasks)
	}
	cl.Close()

	d.stop(t)
	if out := d.stdout(); !strings.Contains(out, "nothing on disk") || !strings.Contains(out, "group.protocol=streams") || !strings.Contains(out, "stopped") {
		t.Fatalf("demo output:\n%s", out)
	}
}

// demo is a running `streamshift demo` process.
type demo struct {
	cmd       *exec.Cmd
	bootstrap string
	done      chan struct{} // closed when the process has exited
	mu        sync.Mutex
	out       bytes.Buffer // its stdout so far
}

func (d *demo) stdout() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.String()
}

// startDemo starts the demo on free loopback ports (retried on a port
// taken meanwhile) and waits for its banner.
func startDemo(t *testing.T, args ...string) *demo {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 0; attempt < 10; attempt++ {
		listen, admin := freePort(t, 4), freePort(t, 1)
		logs, err := os.CreateTemp(t.TempDir(), "demo-*.log")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, append([]string{"demo",
			"--listen", "127.0.0.1:" + strconv.Itoa(listen), "--node-id-max", "2",
			"--admin-listen", "127.0.0.1:" + strconv.Itoa(admin),
			"--shutdown-timeout", demoShutdownTimeout.String()}, args...)...)
		// Through the environment, as run takes it: no initial rebalance delay.
		cmd.Env = append(os.Environ(), asStreamshift+"=1", "STREAMSHIFT_STREAMS_INITIAL_REBALANCE_DELAY_MS=0")
		cmd.Stderr = logs
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		d := &demo{cmd: cmd, done: make(chan struct{})}
		banner := make(chan string, 1)
		go func() {
			for sc := bufio.NewScanner(stdout); sc.Scan(); {
				d.mu.Lock()
				d.out.WriteString(sc.Text() + "\n")
				d.mu.Unlock()
				if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "bootstrap" {
					banner <- f[1]
				}
			}
			_ = cmd.Wait()
			close(d.done)
		}()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-d.done
			if t.Failed() {
				b, _ := os.ReadFile(logs.Name())
				t.Logf("demo stdout:\n%s\ndemo stderr:\n%s", d.stdout(), b)
			}
		})
		select {
		case d.bootstrap = <-banner:
			if want := "127.0.0.1:" + strconv.Itoa(listen); d.bootstrap != want {
				t.Fatalf("banner bootstrap %s, want %s", d.bootstrap, want)
			}
			return d
		case <-d.done:
			if b, _ := os.ReadFile(logs.Name()); bytes.Contains(b, []byte("address already in use")) {
				continue
			}
			t.Fatalf("the demo exited before its banner: %v", cmd.ProcessState)
		case <-time.After(30 * time.Second):
			t.Fatal("no banner within 30s")
		}
	}
	t.Fatal("no free ports")
	return nil
}

// stop sends SIGTERM and wants exit code 0 within the shutdown timeout
// (plus the time to close the coordinator and the cluster).
func (d *demo) stop(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.done:
	case <-time.After(demoShutdownTimeout + 5*time.Second):
		t.Fatalf("the demo did not stop within %v of SIGTERM", demoShutdownTimeout+5*time.Second)
	}
	if code := d.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("the demo exited with %v, want code 0", d.cmd.ProcessState)
	}
}

// freePort is the first of n consecutive loopback ports that were free.
func freePort(t *testing.T, n int) int {
	t.Helper()
next:
	for attempt := 0; attempt < 100; attempt++ {
		base := 20000 + rand.IntN(30000)
		for p := base; p < base+n; p++ {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				continue next
			}
			ln.Close()
		}
		return base
	}
	t.Fatal("no free ports")
	return 0
}

// consume reads n records of topic from its start through bootstrap.
func consume(ctx context.Context, t *testing.T, bootstrap, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume %s: %d of %d records: %v", topic, len(out), n, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		out = append(out, fs.Records()...)
	}
	return out
}

// joinStreamsGroup joins group with a hand-written StreamsGroupHeartbeat
// (one subtopology reading topic) through cl and heartbeats until the
// member owns its tasks, which it returns.
func joinStreamsGroup(ctx context.Context, t *testing.T, cl *kgo.Client, group, topic string) []kmsg.TaskIDs {
	t.Helper()
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorKeys = group, []string{group}
	fresp, err := fc.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	node := fresp.NodeID
	if len(fresp.Coordinators) > 0 {
		node = fresp.Coordinators[0].NodeID
	}
	broker := cl.Broker(int(node))

	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID = group, "demo-member"
	req.EndpointInformationEpoch, req.RebalanceTimeoutMillis = -1, 30000
	req.ProcessID = kmsg.StringPtr("demo-process")
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{topic}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	var owned []kmsg.TaskIDs
	for {
		resp, err := req.RequestWith(ctx, broker)
		if err != nil {
			t.Fatalf("StreamsGroupHeartbeat through the demo: %v", err)
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			t.Fatalf("StreamsGroupHeartbeat: %v %s", err, deref(resp.ErrorMessage))
		}
		if resp.ActiveTasks != nil {
			owned = resp.ActiveTasks
		}
		if len(owned) > 0 && len(resp.Status) == 0 {
			return owned
		}
		if ctx.Err() != nil {
			t.Fatalf("never assigned tasks: last response %+v", resp)
		}
		time.Sleep(100 * time.Millisecond)
		next := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		next.Group, next.MemberID, next.MemberEpoch = group, req.MemberID, resp.MemberEpoch
		next.ActiveTasks, next.StandbyTasks, next.WarmupTasks = owned, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		req = next
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestDemoArgs: --produce is the demo's, --upstream is refused, the rest
// goes to run's configuration.
func TestDemoArgs(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		rest  []string
		topic string
		err   string
	}{
		{[]string{"--produce", "words", "--listen", "127.0.0.1:1"}, []string{"--listen", "127.0.0.1:1"}, "words", ""},
		{[]string{"-produce=in", "--log-level=debug"}, []string{"--log-level=debug"}, "in", ""},
		{[]string{"--listen", "127.0.0.1:1"}, []string{"--listen", "127.0.0.1:1"}, "", ""},
		{[]string{"--upstream", "kafka:9092"}, nil, "", "--upstream"},
		{[]string{"--produce"}, nil, "", "needs a topic"},
		{[]string{"-h"}, nil, "", "help"},
	} {
		rest, topic, err := demoArgs(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || topic != tc.topic || !slices.Equal(rest, tc.rest) {
			t.Errorf("%q: %q %q %v, want %q %q", tc.args, rest, topic, err, tc.rest, tc.topic)
		}
	}
	if _, _, err := demoArgs([]string{"--help"}); !errors.Is(err, errDemoHelp) {
		t.Errorf("--help: %v", err)
	}
}
