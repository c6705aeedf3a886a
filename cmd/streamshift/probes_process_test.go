package main

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/testpki"
)

// runProc is a `streamshift run` child process: the test binary as the
// real main (asStreamshift), so signals and the exit code are the
// process's own.
type runProc struct {
	cmd    *exec.Cmd
	admin  string // host:port of its admin listener
	listen int    // its bootstrap port; node N is on listen+1+N
	logs   string // the file of its stderr (JSON lines)
	done   chan struct{}
}

// startRun starts `streamshift run` with args after --listen,
// --node-port-base and --admin-listen on free loopback ports (tried again
// on other ports when one was taken meanwhile), from a clean environment
// plus env: every other key keeps its default. nodePorts is how many node
// ports its node id range needs.
func startRun(t *testing.T, nodePorts int, env []string, args ...string) *runProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var clean []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STREAMSHIFT_") {
			clean = append(clean, kv)
		}
	}
	for attempt := 0; attempt < 10; attempt++ {
		listen, admin := freePort(t, 1+nodePorts), freePort(t, 1)
		logs, err := os.CreateTemp(t.TempDir(), "run-*.log")
		if err != nil {
			t.Fatal(err)
		}
		r := &runProc{admin: "127.0.0.1:" + strconv.Itoa(admin), listen: listen, logs: logs.Name(), done: make(chan struct{})}
		r.cmd = exec.Command(exe, append([]string{"run", "--listen", "127.0.0.1:" + strconv.Itoa(listen),
			"--node-port-base", strconv.Itoa(listen + 1), "--admin-listen", r.admin}, args...)...)
		r.cmd.Env = append(append(clean, asStreamshift+"=1"), env...)
		r.cmd.Stderr = logs
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			_ = r.cmd.Wait()
			logs.Close()
			close(r.done)
		}()
		t.Cleanup(func() {
			_ = r.cmd.Process.Kill()
			<-r.done
			if t.Failed() {
				t.Logf("streamshift run (admin %s) log:\n%s", r.admin, r.log())
			}
		})
		// The admin listener is bound first: once it answers, the ports
		// are ours, or the process exits naming the one taken.
		for {
			if _, _, err := r.get("/healthz"); err == nil {
				return r
			}
			select {
			case <-r.done:
				// A port picked free was taken meanwhile; never the
				// internal listener's, which must not be a fixed one.
				if l := r.log(); strings.Contains(l, "address already in use") && !strings.Contains(l, "cluster.listen") {
					goto next
				}
				t.Fatalf("streamshift run exited at start: %v\n%s", r.cmd.ProcessState, r.log())
			case <-time.After(5 * time.Millisecond):
			}
		}
	next:
	}
	t.Fatal("no free ports")
	return nil
}

func (r *runProc) log() string {
	b, _ := os.ReadFile(r.logs)
	return string(b)
}

// get asks the admin listener for path: status code and body.
func (r *runProc) get(path string) (int, string, error) {
	resp, err := http.Get("http://" + r.admin + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), err
}

// waitReady polls /readyz as fast as it answers until the first 200,
// failing if the process exits first.
func (r *runProc) waitReady(t *testing.T) {
	t.Helper()
	for {
		code, _, err := r.get("/readyz")
		if err == nil && code == http.StatusOK {
			return
		}
		select {
		case <-r.done:
			t.Fatalf("streamshift run exited before /readyz said 200: %v", r.cmd.ProcessState)
		default:
		}
	}
}

// waitNotReady polls until /readyz answers 503 with a body containing
// want, checking on the way that /healthz stays 200 (liveness only).
func (r *runProc) waitNotReady(t *testing.T, want string) {
	t.Helper()
	for {
		if code, body, err := r.get("/healthz"); err != nil || code != http.StatusOK {
			t.Fatalf("/healthz while starting: %d %q %v, want 200", code, body, err)
		}
		code, body, err := r.get("/readyz")
		if err != nil {
			t.Fatal(err)
		}
		if code == http.StatusOK {
			t.Fatalf("/readyz 200, want 503 %q", want)
		}
		if code == http.StatusServiceUnavailable && strings.Contains(body, want) {
			return
		}
		select {
		case <-r.done:
			t.Fatalf("streamshift run exited: %v", r.cmd.ProcessState)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop sends sig and wants exit code 0, an info line "stopping" naming
// the signal, and no error logged.
func (r *runProc) stop(t *testing.T, sig syscall.Signal, name string) {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	r.exited(t, name)
}

// exited waits for the exit that signal name asked for: code 0, an info
// line "stopping" naming the signal, and no error logged.
func (r *runProc) exited(t *testing.T, name string) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no exit after %s", name)
	}
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %v after %s, want 0", r.cmd.ProcessState, name)
	}
	var stopLine bool
	for _, line := range strings.Split(r.log(), "\n") {
		if strings.Contains(line, `"level":"error"`) {
			t.Errorf("error logged: %s", line)
		}
		if strings.Contains(line, `"level":"info"`) && strings.Contains(line, `"signal":"`+name+`"`) && strings.Contains(line, `"message":"stopping"`) {
			stopLine = true
		}
	}
	if !stopLine {
		t.Fatalf("no info line \"stopping\" naming %s", name)
	}
}

// apiVersions opens a connection to addr (over TLS with roots) and wants
// an answer to ApiVersions on it.
func apiVersions(addr string, roots *tls.Config) error {
	var c net.Conn
	var err error
	d := &net.Dialer{Timeout: 10 * time.Second}
	if roots != nil {
		c, err = tls.DialWithDialer(d, "tcp", addr, roots)
	} else {
		c, err = d.Dial("tcp", addr)
	}
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute)) // a hang guard
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "probe", "1"
	if _, err := c.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("probe")).AppendRequest(nil, req, 7)); err != nil {
		return fmt.Errorf("send ApiVersions: %w", err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return fmt.Errorf("read ApiVersions response (connection closed instead of answered?): %w", err)
	}
	frame := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, frame); err != nil {
		return fmt.Errorf("read ApiVersions response: %w", err)
	}
	// ApiVersions responses keep header v0: the correlation id only.
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = req.Version
	if err := resp.ReadFrom(frame[4:]); err != nil {
		return fmt.Errorf("decode ApiVersions response: %w", err)
	}
	if corr := int32(binary.BigEndian.Uint32(frame)); corr != 7 || resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		return fmt.Errorf("ApiVersions answer: correlation id %d, error code %d, %d keys", corr, resp.ErrorCode, len(resp.ApiKeys))
	}
	return nil
}

// TestReadyzMeansServing: from the first 200 of /readyz on, every new
// connection is served: 20 to the bootstrap and 20 to a node port, opened
// at once right after that 200, each get an answer to ApiVersions; in
// plaintext and over TLS, with the durable log (the default, set here
// explicitly), whose load and instance-group join make the start long.
// Before the fix the listeners accepted from the bind on and closed what
// they accepted until serving, while /readyz said 200 once metadata came:
// these connections got EOF.
func TestReadyzMeansServing(t *testing.T) {
	pki, err := testpki.NewServerFiles(t.TempDir(), "listener", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		tls  *tls.Config
	}{
		{"plaintext", nil, nil},
		{"tls", []string{"STREAMSHIFT_TLS_CERT_FILE=" + pki.CertFile, "STREAMSHIFT_TLS_KEY_FILE=" + pki.KeyFile},
			&tls.Config{RootCAs: pki.CA.Pool(), ServerName: "127.0.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			r := startRun(t, 1, append([]string{"STREAMSHIFT_COORDINATOR_DURABLE_LOG=true"}, tc.env...),
				"--upstream", c.ListenAddrs()[0], "--node-id-min", "0", "--node-id-max", "0")
			r.waitReady(t)
			bootstrap := "127.0.0.1:" + strconv.Itoa(r.listen)
			node0 := "127.0.0.1:" + strconv.Itoa(r.listen+1)
			var wg sync.WaitGroup
			errs := make(chan error, 40)
			for i := 0; i < 40; i++ {
				addr := bootstrap
				if i%2 == 1 {
					addr = node0
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := apiVersions(addr, tc.tls); err != nil {
						errs <- fmt.Errorf("%s: %w", addr, err)
					}
				}()
			}
			wg.Wait()
			close(errs)
			failed := 0
			for err := range errs {
				failed++
				t.Error(err)
			}
			if failed > 0 {
				t.Fatalf("%d of 40 connections opened after the first 200 of /readyz were not answered", failed)
			}
			if !strings.Contains(r.log(), `"durable_log":true`) {
				t.Fatal("the durable log is off")
			}
			r.stop(t, syscall.SIGTERM, "SIGTERM")
		})
	}
}

// TestTwoInstancesOneHost: two `streamshift run` on one host, each in
// front of its own cluster, with the defaults but --listen,
// --node-port-base and --admin-listen (the durable log on, as by
// default): both become ready. The internal listener took a fixed port
// (19091) before, so the second exited with "address already in use".
func TestTwoInstancesOneHost(t *testing.T) {
	var procs []*runProc
	for i := 0; i < 2; i++ {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// The default node id range, 0..31: 32 node ports.
		procs = append(procs, startRun(t, 32, nil, "--upstream", c.ListenAddrs()[0]))
	}
	for _, r := range procs {
		r.waitReady(t)
		if err := apiVersions("127.0.0.1:"+strconv.Itoa(r.listen), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Each logged the internal address it bound, which is no fixed port.
	for _, r := range procs {
		if !strings.Contains(r.log(), `"cluster_listen":"127.0.0.1:`) || strings.Contains(r.log(), `"cluster_listen":"127.0.0.1:19091"`) {
			t.Fatalf("no internal listener on a port of its own logged")
		}
		if !strings.Contains(r.log(), `"durable_log":true`) {
			t.Fatal("the durable log is off by default")
		}
	}
	for _, r := range procs {
		r.stop(t, syscall.SIGTERM, "SIGTERM")
	}
}

// TestStopSignalDuringStart: while no broker answers, /healthz is 200
// (liveness only: restarting would not bring the brokers) and /readyz 503
// saying why; a SIGTERM or SIGINT at any step of the start (waiting for
// the brokers, opening the group log, joining the instance group) ends the
// process with exit code 0 and an info line naming the signal.
func TestStopSignalDuringStart(t *testing.T) {
	t.Run("brokers unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		nobody := l.Addr().String()
		l.Close() // nothing listens there now
		r := startRun(t, 1, nil, "--upstream", nobody, "--node-id-min", "0", "--node-id-max", "0")
		r.waitNotReady(t, "starting: waiting for the upstream brokers")
		r.stop(t, syscall.SIGTERM, "SIGTERM")
		if !strings.Contains(r.log(), "waiting for the upstream brokers") {
			t.Fatal("the stop line does not say what the start was doing")
		}
	})
	// A request the start needs is held by the cluster: the start waits
	// at that step.
	for _, tc := range []struct {
		name string
		key  kmsg.Key
		step string
		sig  syscall.Signal
		sigN string
	}{
		{"opening the group log", kmsg.CreateTopics, "starting: opening the group log", syscall.SIGINT, "SIGINT"},
		{"joining the instance group", kmsg.JoinGroup, "starting: joining the instance group", syscall.SIGTERM, "SIGTERM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			release := make(chan struct{})
			unhold := sync.OnceFunc(func() { close(release) })
			defer unhold() // before c.Close
			c.ControlKey(int16(tc.key), func(kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				c.SleepControl(func() { <-release })
				return nil, nil, false
			})
			r := startRun(t, 1, nil, "--upstream", c.ListenAddrs()[0], "--node-id-min", "0", "--node-id-max", "0")
			r.waitNotReady(t, tc.step)
			if err := r.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			// The held request is answered now, as a broker does in time:
			// kfake would hold it for ever, and the client's close waits
			// for a JoinGroup in flight.
			unhold()
			r.exited(t, tc.sigN)
		})
	}
}
