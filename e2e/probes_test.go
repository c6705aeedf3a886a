//go:build e2e

package e2e_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestReadyzServesRealBroker: `streamshift run` with the durable log in
// front of a real Kafka 3.9 broker; from the first 200 of /readyz on,
// every new connection is answered: 10 to the bootstrap and 10 to the
// broker's node port, opened at once right after that 200, each get their
// ApiVersions answer. The start loads the group log and joins the instance
// group against the real broker, seconds during which the listeners used
// to close every connection while /readyz already said 200. A SIGTERM
// then ends it with exit code 0.
func TestReadyzServesRealBroker(t *testing.T) {
	t.Parallel()
	dir, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	broker, err := harness.StartBroker(ctx, harness.BrokerOptions{Version: harness.Kafka39, Dir: filepath.Join(dir, "broker")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = broker.Stop() }()
	bin, err := harness.BuildStreamshift(dir)
	if err != nil {
		t.Fatal(err)
	}
	ports, err := harness.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	bootstrap, node1 := "127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1])
	admin := "127.0.0.1:" + strconv.Itoa(ports[2])
	logf, err := os.Create(filepath.Join(dir, "streamshift.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	// The broker is node 1: its port is node-port-base + 1.
	cmd := exec.Command(bin, "run", "--upstream", broker.Bootstrap, "--listen", bootstrap,
		"--node-port-base", strconv.Itoa(ports[1]-1), "--node-id-min", "1", "--node-id-max", "1",
		"--admin-listen", admin, "--proxy-id", "e2e-readyz")
	cmd.Env = append(harness.Environ(), "STREAMSHIFT_COORDINATOR_DURABLE_LOG=true", "STREAMSHIFT_COORDINATOR_CLUSTER_ID=e2e-readyz")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	defer func() { _ = cmd.Process.Kill(); <-done }()

	// The first 200, polled as fast as /readyz answers.
	notReady := map[string]bool{}
	for {
		resp, err := http.Get("http://" + admin + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			notReady[strings.TrimSpace(string(body))] = true
		}
		select {
		case <-done:
			t.Fatalf("streamshift exited before /readyz said 200 (log %s)", logf.Name())
		case <-ctx.Done():
			t.Fatalf("/readyz never 200 (log %s); it said %v", logf.Name(), notReady)
		default:
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		addr := bootstrap
		if i%2 == 1 {
			addr = node1
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := rawApiVersions(addr); err != nil {
				errs <- fmt.Errorf("%s: %w", addr, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("/readyz said before its first 200: %v", notReady)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("no exit after SIGTERM")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %v after SIGTERM, want 0 (log %s)", cmd.ProcessState, logf.Name())
	}
}

// rawApiVersions sends ApiVersions on a new connection to addr and wants
// its answer: a connection closed instead is an error.
func rawApiVersions(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute)) // a hang guard
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "streamshift-e2e", "0"
	if _, err := c.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("e2e")).AppendRequest(nil, req, 1)); err != nil {
		return fmt.Errorf("send ApiVersions: %w", err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return fmt.Errorf("no ApiVersions answer (connection closed?): %w", err)
	}
	frame := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, frame); err != nil {
		return fmt.Errorf("read ApiVersions answer: %w", err)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = req.Version
	if err := resp.ReadFrom(frame[4:]); err != nil { // header v0: the correlation id
		return fmt.Errorf("decode ApiVersions answer: %w", err)
	}
	if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		return fmt.Errorf("ApiVersions answer: error code %d, %d keys", resp.ErrorCode, len(resp.ApiKeys))
	}
	return nil
}
