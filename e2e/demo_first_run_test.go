//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestDemoFirstRun is a newcomer's first run against `streamshift demo`
// with Kafka's own tools and an ordinary Kafka Streams app: kafka-topics
// --create (with and without --config) succeeds without an exception, and a
// classic-protocol Kafka Streams 3.6 count app (a repartition topic and an
// output topic, neither created by hand) reaches RUNNING, creates its
// repartition topic and writes its output topic, created on first use. Then
// the README's migration: a 4.4 instance on the streams protocol joins (the
// takeover), runs tasks, and leaves (the hand-back), the output verified
// against the input before, in between and after. A Kafka Streams 4.4 word
// count on the streams protocol runs beside it, its output verified too.
// Kafka's group tools (kafka-consumer-groups, kafka-streams-groups,
// kafka-configs --entity-type groups) describe both groups with no error
// line, and the status page shows the classic member's lag (from its task
// offset sums) in headless Chromium (screenshot ui-takeover.png in the
// test's folder).
func TestDemoFirstRun(t *testing.T) {
	t.Parallel()
	if err := harness.CheckBuilt("app-3.6", "app-4.4", "tools-4.4"); err != nil {
		t.Fatal(err)
	}
	dir, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil && os.Getenv("CI") != "" {
		t.Fatalf("chromium is required under CI: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	bootstrap, admin := startDemoProc(ctx, t, dir)

	// Kafka's CLI: the CreateTopics answer the Java admin reads.
	for _, args := range [][]string{
		{"--create", "--topic", "made-by-tool", "--partitions", "2"},
		{"--create", "--topic", "made-by-tool-compact", "--partitions", "1", "--config", "cleanup.policy=compact"},
	} {
		out, err := harness.RunTool(ctx, dir, "kafka-topics", append([]string{"--bootstrap-server", bootstrap}, args...)...)
		if err != nil || !strings.Contains(out, "Created topic") || strings.Contains(out, "Exception") || strings.Contains(out, "Error") {
			t.Fatalf("kafka-topics %v: %v\n%s", args, err, out)
		}
	}
	out, err := harness.RunTool(ctx, dir, "kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", "made-by-tool-compact")
	if err != nil || !strings.Contains(out, "cleanup.policy=compact") {
		t.Fatalf("kafka-topics --describe: %v\n%s", err, out)
	}

	// A classic Kafka Streams app over the demo's input stream.
	const appID, output = "first-run", "first-run-counts"
	app, err := harness.StartApp(harness.AppOptions{
		Name: "c1", Build: harness.App36, Dir: filepath.Join(dir, "app-c1"), Bootstrap: bootstrap,
		ApplicationID: appID, Input: "words", Output: output,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = app.Stop() }()
	if _, err := app.WaitEvent(ctx, func(e harness.Event) bool { return e.Kind == "state" && e.To == "RUNNING" }); err != nil {
		t.Fatalf("the app never reached RUNNING (log %s): %v", app.Log, err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(output), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	fetches := cl.PollRecords(ctx, 1)
	if err := fetches.Err0(); err != nil || fetches.NumRecords() == 0 {
		t.Fatalf("no record on the output topic %s (app log %s): %v", output, app.Log, err)
	}
	topics, err := kadm.NewClient(cl).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	repartition := ""
	for _, name := range topics.Names() {
		if strings.HasPrefix(name, appID+"-") && strings.HasSuffix(name, "-repartition") {
			repartition = name
		}
	}
	if repartition == "" {
		t.Fatalf("no repartition topic of %s among %v", appID, topics.Names())
	}
	for _, e := range app.Events() {
		if e.Kind == "uncaught" {
			t.Fatalf("the app failed: %s", e.Error)
		}
	}
	t.Logf("output topic %s written, repartition topic %s created", output, repartition)
	verifyDemoOutput(ctx, t, bootstrap, "words", output, "classic")
	if out := demoTool(ctx, t, dir, bootstrap, "kafka-consumer-groups", "--list"); !strings.Contains(out, appID) {
		t.Fatalf("kafka-consumer-groups --list lacks %s:\n%s", appID, out)
	}
	demoTool(ctx, t, dir, bootstrap, "kafka-consumer-groups", "--describe", "--group", appID)

	// A Kafka Streams 4.4 word count on the streams protocol from the start:
	// a streams group streamshift serves.
	const streamsID, streamsOutput = "first-run-streams", "first-run-streams-counts"
	wc, err := harness.StartApp(harness.AppOptions{
		Name: "w1", Build: harness.App44, Dir: filepath.Join(dir, "app-w1"), Bootstrap: bootstrap,
		ApplicationID: streamsID, Input: "words", Output: streamsOutput, GroupProtocol: "streams",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = wc.Stop() }()
	if _, err := wc.WaitEvent(ctx, func(e harness.Event) bool { return e.Kind == "state" && e.To == "RUNNING" }); err != nil {
		t.Fatalf("the streams word count never reached RUNNING (log %s): %v", wc.Log, err)
	}
	verifyDemoOutput(ctx, t, bootstrap, "words", streamsOutput, "streams word count")
	if out := demoTool(ctx, t, dir, bootstrap, "kafka-streams-groups", "--list"); !strings.Contains(out, streamsID) {
		t.Fatalf("kafka-streams-groups --list lacks %s:\n%s", streamsID, out)
	}
	for _, args := range [][]string{{"--describe", "--group", streamsID}, {"--describe", "--group", streamsID, "--members", "--verbose"}, {"--describe", "--group", streamsID, "--state"}} {
		demoTool(ctx, t, dir, bootstrap, "kafka-streams-groups", args...)
	}
	if out := demoTool(ctx, t, dir, bootstrap, "kafka-configs", "--describe", "--entity-type", "groups", "--entity-name", streamsID, "--all"); !strings.Contains(out, "streams.session.timeout.ms") {
		t.Fatalf("kafka-configs --describe --entity-type groups lacks the streams group configs:\n%s", out)
	}

	// The README's five-minute migration: a kafka-streams 4.4 instance on
	// the streams protocol joins the live classic group (the takeover),
	// runs tasks, and leaves (the hand-back).
	streamsApp, err := harness.StartApp(harness.AppOptions{
		Name: "s1", Build: harness.App44, Dir: filepath.Join(dir, "app-s1"), Bootstrap: bootstrap,
		ApplicationID: appID, Input: "words", Output: output, GroupProtocol: "streams",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = streamsApp.Stop() }()
	if err := waitDemoLog(ctx, filepath.Join(dir, "demo.log"), "takeover done"); err != nil {
		t.Fatalf("no takeover: %v", err)
	}
	if _, err := streamsApp.WaitEvent(ctx, func(e harness.Event) bool {
		return e.Kind == "tasks" && e.State == "RUNNING" && len(e.Active) > 0
	}); err != nil {
		t.Fatalf("the streams instance never ran a task: %v", err)
	}
	verifyDemoOutput(ctx, t, bootstrap, "words", output, "after the takeover")
	demoTool(ctx, t, dir, bootstrap, "kafka-streams-groups", "--describe", "--group", appID, "--members", "--verbose")
	if chromium != "" {
		checkDemoStatusPage(ctx, t, chromium, admin, appID, "classic", dir, "takeover")
	} else {
		t.Log("chromium not installed (apt-get install -y chromium): the status page is not checked in a browser")
	}
	if err := streamsApp.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := waitDemoLog(ctx, filepath.Join(dir, "demo.log"), "hand-back done"); err != nil {
		t.Fatalf("no hand-back: %v", err)
	}
	verifyDemoOutput(ctx, t, bootstrap, "words", output, "after the hand-back")
	demoTool(ctx, t, dir, bootstrap, "kafka-consumer-groups", "--describe", "--group", appID)
	for _, e := range append(append(app.Events(), streamsApp.Events()...), wc.Events()...) {
		if e.Kind == "uncaught" {
			t.Fatalf("an app failed: %s", e.Error)
		}
	}
}

// waitDemoLog waits until the demo's log has a line containing want.
func waitDemoLog(ctx context.Context, file, want string) error {
	for {
		if b, err := os.ReadFile(file); err == nil && strings.Contains(string(b), want) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%q not in %s: %w", want, file, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// startDemoProc starts `streamshift demo --produce words` on free loopback
// ports (the bootstrap port and the node ports of its three brokers, 0..2,
// right above it, and the admin endpoints on another), logs to dir/demo.log,
// and returns its bootstrap and admin addresses once it answers Kafka
// requests; it is stopped when the test ends.
func startDemoProc(ctx context.Context, t *testing.T, dir string) (bootstrap, admin string) {
	t.Helper()
	bin, err := harness.BuildStreamshift(dir)
	if err != nil {
		t.Fatal(err)
	}
	port := freeRun(t, 4)
	listen := "127.0.0.1:" + strconv.Itoa(port)
	logf, err := os.Create(filepath.Join(dir, "demo.log"))
	if err != nil {
		t.Fatal(err)
	}
	adminPort, err := harness.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	admin = "127.0.0.1:" + strconv.Itoa(adminPort[0])
	cmd := exec.Command(bin, "demo", "--produce", "words", "--listen", listen, "--node-id-max", "2", "--admin-listen", admin)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	died := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(died) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-died:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-died
		}
	})
	if err := harness.WaitKafkaReady(ctx, listen, time.Minute, died); err != nil {
		t.Fatalf("streamshift demo (log %s): %v", logf.Name(), err)
	}
	return listen, admin
}

// freeRun finds n consecutive free loopback ports and returns the first.
func freeRun(t *testing.T, n int) int {
	t.Helper()
	for attempt := 0; attempt < 100; attempt++ {
		ports, err := harness.FreePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		var ls []net.Listener
		ok := true
		for p := ports[0]; p < ports[0]+n; p++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				ok = false
				break
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if ok {
			return ports[0]
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}
