package main

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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

// demo is a running `streamshift demo` process.
type demo struct {
	cmd       *exec.Cmd
	bootstrap string
	logs      string        // the file of its stderr (JSON logs)
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
		d := &demo{cmd: cmd, logs: logs.Name(), done: make(chan struct{})}
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

// stop sends SIGTERM and wants exit code 0 within the shutdown timeout.
func (d *demo) stop(t *testing.T) {
	t.Helper()
	start := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.done:
	case <-time.After(demoShutdownTimeout):
		t.Fatalf("the demo did not stop within the shutdown timeout (%v) of SIGTERM", demoShutdownTimeout)
	}
	if code := d.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("the demo exited with %v, want code 0", d.cmd.ProcessState)
	}
	b, err := os.ReadFile(d.logs)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"level":"error"`)) {
		t.Fatal("the demo logged errors")
	}
	// Its clients (the input producer at least) connected, but a line per
	// connection is debug in the demo: the banner and what matters stand out.
	if bytes.Contains(b, []byte("client connected")) || bytes.Contains(b, []byte("client disconnected")) {
		t.Fatal("the demo logs client connects and disconnects at info")
	}
	t.Logf("stopped cleanly %v after SIGTERM", time.Since(start).Round(time.Millisecond))
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
