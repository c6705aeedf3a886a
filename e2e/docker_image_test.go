//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
)

// dockerImage is the tag the test builds (not the user's "streamshift").
const dockerImage = "streamshift-e2e"

// TestDockerImage builds the image from source with the Dockerfile as
// `make image` does (no registry, no module proxy: a Go builder made from the
// local toolchain and a vendored copy of the tree as the context), checks
// what it is made of (the version and commit stamped from git, uid 65532,
// the CA bundle, the admin listener on every interface of the container),
// runs `streamshift version` in it, then runs it in front
// of a real Kafka 3.9 broker and serves a client through it: a topic
// created, a record produced and consumed back, /readyz 200. The container
// shares the host's network (--network host): it listens on loopback, as
// every e2e process does. Without a docker daemon the test is skipped,
// except under CI (.ci/run installs docker.io and starts dockerd), where it
// fails.
func TestDockerImage(t *testing.T) {
	t.Parallel()
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("docker is required under CI: %v\n%s", err, out)
		}
		t.Skipf("no docker daemon: %v\n%s", err, out)
	}
	dir, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // the image compiles everything: minutes on a loaded 2-core machine
	defer cancel()

	// What make stamps into the image (read before it builds, as make does).
	describe, err := exec.Command("git", "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		t.Fatalf("git describe: %v", err)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	start := time.Now()
	build := exec.CommandContext(ctx, "make", "image", "IMAGE="+dockerImage)
	build.Dir = filepath.Dir(harness.Root())
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Logf("make image: %s", time.Since(start).Round(time.Second))

	out, err := exec.CommandContext(ctx, "docker", "run", "--rm", "--network", "host", dockerImage, "version").CombinedOutput()
	want := fmt.Sprintf("streamshift %s (commit %s,", strings.TrimSpace(string(describe)), strings.TrimSpace(string(head)))
	if err != nil || !strings.HasPrefix(string(out), want) {
		t.Fatalf("docker run %s version: %v\n%s\nwant it to start %q", dockerImage, err, out, want)
	}
	t.Logf("in the container: %s", strings.TrimSpace(string(out)))
	inspect, err := exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Config.User}} {{json .Config.Env}}", dockerImage).Output()
	if err != nil {
		t.Fatalf("docker image inspect: %v", err)
	}
	if !strings.HasPrefix(string(inspect), "65532:65532 ") || !strings.Contains(string(inspect), `"STREAMSHIFT_ADMIN_LISTEN=0.0.0.0:19080"`) {
		t.Fatalf("docker image inspect %s: %s, want user 65532:65532 and STREAMSHIFT_ADMIN_LISTEN=0.0.0.0:19080", dockerImage, inspect)
	}
	// The CA bundle, for TLS to the brokers: scratch has no shell to look
	// with, so the file is copied out of a created container.
	created, err := exec.CommandContext(ctx, "docker", "create", dockerImage).Output()
	if err != nil {
		t.Fatalf("docker create: %v", err)
	}
	container := strings.TrimSpace(string(created))
	ca, err := exec.CommandContext(ctx, "docker", "cp", container+":/etc/ssl/certs/ca-certificates.crt", "-").Output()
	_ = exec.Command("docker", "rm", container).Run()
	if err != nil || !strings.Contains(string(ca), "BEGIN CERTIFICATE") {
		t.Fatalf("docker cp %s:/etc/ssl/certs/ca-certificates.crt: %v (%d bytes)", dockerImage, err, len(ca))
	}

	broker, err := harness.StartBroker(ctx, harness.BrokerOptions{Version: harness.Kafka39, Dir: filepath.Join(dir, "broker")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = broker.Stop() }()
	ports, err := harness.FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	listen := "127.0.0.1:" + strconv.Itoa(ports[0])
	admin := "127.0.0.1:" + strconv.Itoa(ports[2])
	// The image runs with the durable log (the default of `streamshift
	// run`): its internal listener gets a port of its own too, not the
	// host's 19091 (host network).
	internal := "127.0.0.1:" + strconv.Itoa(ports[3])
	name := fmt.Sprintf("streamshift-e2e-%d", os.Getpid())
	// The broker is node 1: its port is node-port-base + 1.
	run := exec.CommandContext(ctx, "docker", "run", "-d", "--rm", "--network", "host", "--name", name,
		"-e", "STREAMSHIFT_UPSTREAM="+broker.Bootstrap,
		"-e", "STREAMSHIFT_LISTEN="+listen,
		"-e", "STREAMSHIFT_ADVERTISED_HOST=127.0.0.1",
		"-e", "STREAMSHIFT_ADMIN_LISTEN="+admin,
		"-e", "STREAMSHIFT_CLUSTER_LISTEN="+internal,
		"-e", "STREAMSHIFT_NODE_PORT_BASE="+strconv.Itoa(ports[1]-1),
		"-e", "STREAMSHIFT_NODE_ID_MIN=1", "-e", "STREAMSHIFT_NODE_ID_MAX=1",
		dockerImage)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("docker run: %v\n%s", err, out)
	}
	defer func() {
		logs, _ := exec.Command("docker", "logs", name).CombinedOutput()
		_ = os.WriteFile(filepath.Join(dir, "streamshift.log"), logs, 0o644)
		_ = exec.Command("docker", "rm", "-f", name).Run()
	}()
	if err := harness.WaitKafkaReady(ctx, listen, time.Minute, nil); err != nil {
		t.Fatalf("the container does not answer on %s: %v", listen, err)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(listen), kgo.ConsumeTopics("through-docker"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "through-docker"); err != nil {
		t.Fatalf("create a topic through the container: %v", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "through-docker", Value: []byte("hello from the image")}).FirstErr(); err != nil {
		t.Fatalf("produce through the container: %v", err)
	}
	fetches := cl.PollRecords(ctx, 1)
	if err := fetches.Err0(); err != nil || fetches.NumRecords() != 1 || string(fetches.Records()[0].Value) != "hello from the image" {
		t.Fatalf("consume through the container: %v %v", err, fetches.Records())
	}
	resp, err := http.Get("http://" + admin + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz: %s", resp.Status)
	}
}
