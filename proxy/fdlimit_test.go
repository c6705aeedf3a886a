package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// childNofile is the descriptor limit of the proxy process in
// TestConnectionFloodBeyondDescriptors.
const childNofile = 400

// TestConnectionFloodBeyondDescriptors: a proxy with few descriptors
// (RLIMIT_NOFILE 400, in a child process) meets more connections than it
// has descriptors for. The connection limit derived from the descriptor
// limit refuses them on the accept goroutine, and running out of
// descriptors pauses accepting: the proxy keeps running (with gnet's own
// acceptor, a burst it took before OnOpen refused any ran it out of
// descriptors about 1 time in 10 under load, and EMFILE stopped the
// engine). Once the flood closes, a new client is served.
func TestConnectionFloodBeyondDescriptors(t *testing.T) {
	t.Parallel()
	if os.Getenv("STREAMSHIFT_FD_CHILD") != "" {
		runDescriptorChild(t)
		return
	}
	var addr string
	var exited chan string
	for attempt := 0; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr = ln.Addr().String()
		ln.Close()
		var log string
		if exited, log = startDescriptorChild(t, addr); exited != nil {
			break
		}
		if attempt == 5 || !strings.Contains(log, "address already in use") {
			t.Fatalf("child exited before serving:\n%s", log)
		}
	}

	var flood []net.Conn
	for range 3 * childNofile / 4 * 2 { // 600: 3 descriptors each in the child
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			break // the child stopped listening
		}
		flood = append(flood, c)
	}
	// Each connection is served or closed; reading one byte with no
	// request sent tells which without waiting long on served ones.
	for _, c := range flood {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		var b [1]byte
		_, _ = c.Read(b[:])
		c.Close()
	}
	select {
	case log := <-exited:
		t.Fatalf("the proxy stopped under the flood:\n%s", log)
	default:
	}
	waitFor(t, "a client served after the flood", func() error {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		rc := &rawConn{t, c}
		id := "after"
		if _, err := c.Write(kafkaframe.AppendRequest(nil, 1, &id, apiVersionsReq(3))); err != nil {
			return err
		}
		var head [8]byte
		if _, err := io.ReadFull(rc, head[:]); err != nil {
			select {
			case log := <-exited:
				t.Fatalf("the proxy stopped under the flood:\n%s", log)
			default:
			}
			return err
		}
		return nil
	})
}

// startDescriptorChild starts the child serving on addr (and the next
// port, node 0). exited tells its output once it exits; nil if it exited
// before serving, with log its output.
func startDescriptorChild(t *testing.T, addr string) (exited chan string, log string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestConnectionFloodBeyondDescriptors$", "-test.v")
	cmd.Env = append(os.Environ(), "STREAMSHIFT_FD_CHILD="+addr)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(out)
	exited = make(chan string, 1)
	ready := make(chan struct{})
	go func() {
		var all strings.Builder
		for lines.Scan() {
			all.WriteString(lines.Text() + "\n")
			if strings.Contains(lines.Text(), "CHILD READY") {
				close(ready)
			}
		}
		exited <- all.String()
	}()
	select {
	case <-ready:
		return exited, ""
	case log := <-exited:
		return nil, log
	case <-time.After(30 * time.Second):
		t.Fatal("child not ready")
	}
	return nil, ""
}

// runDescriptorChild serves a proxy in front of a fake broker with
// childNofile descriptors, until killed; its Run's result is printed.
func runDescriptorChild(t *testing.T) {
	lim := syscall.Rlimit{Cur: childNofile, Max: childNofile}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	b := startFakeBroker(t, func(b *fakeBroker, c net.Conn) {
		var buf []byte
		for {
			h, msg, err := readRequest(c, buf)
			if err != nil {
				return
			}
			buf = msg
			if out := b.controlPlaneAnswer(h); out != nil {
				if _, err := c.Write(out); err != nil {
					return
				}
			}
		}
	})
	_, port, _ := net.SplitHostPort(os.Getenv("STREAMSHIFT_FD_CHILD"))
	n, _ := strconv.Atoi(port)
	p, err := New(Options{Upstream: []string{b.addr()}, Listen: "127.0.0.1:" + port, NodePortBase: n + 1,
		EventLoops: 2, Log: zerolog.New(os.Stdout).Level(zerolog.WarnLevel)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := p.Listen(ctx); err != nil {
		t.Fatal(err)
	}
	errCh := make(chan error, 1)
	go func() { errCh <- p.Run(ctx) }()
	for !p.Serving() {
		time.Sleep(time.Millisecond)
	}
	os.Stdout.WriteString("CHILD READY max_connections=" + strconv.Itoa(p.limits.max) + "\n")
	if os.Getenv("STREAMSHIFT_FD_HOG") != "" {
		go hogDescriptors()
	}
	err = <-errCh
	os.Stdout.WriteString("CHILD EXIT: " + err.Error() + "\n")
	os.Exit(1)
}

// hogDescriptors opens /dev/null until the process has no descriptor left,
// says so, and closes them all once a line arrives on stdin.
func hogDescriptors() {
	var hog []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			os.Stdout.WriteString("CHILD HOGGED " + strconv.Itoa(len(hog)) + ": " + err.Error() + "\n")
			break
		}
		hog = append(hog, f)
	}
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	for _, f := range hog {
		f.Close()
	}
	os.Stdout.WriteString("CHILD RELEASED\n")
}

// TestAcceptOutOfDescriptors: a proxy process with no descriptor left
// (EMFILE on accept) keeps its listeners: a client that connects meanwhile
// waits in the kernel's queue and is served once descriptors are free. With
// gnet's own acceptor, EMFILE stopped the engine and the proxy exited.
func TestAcceptOutOfDescriptors(t *testing.T) {
	if os.Getenv("STREAMSHIFT_FD_CHILD") != "" {
		runDescriptorChild(t)
		return
	}
	var child *hogChild
	for attempt := 0; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		var log string
		if child, log = startHogChild(t, addr); child != nil {
			break
		}
		if attempt == 5 || !strings.Contains(log, "address already in use") {
			t.Fatalf("child exited before serving:\n%s", log)
		}
	}
	child.waitLine(t, "CHILD HOGGED")
	c, err := net.DialTimeout("tcp", child.addr, 20*time.Second)
	if err != nil {
		t.Fatalf("dial while the proxy has no descriptor: %v\n%s", err, child.output())
	}
	defer c.Close()
	id := "waiting"
	if _, err := c.Write(kafkaframe.AppendRequest(nil, 7, &id, apiVersionsReq(3))); err != nil {
		t.Fatal(err)
	}
	child.waitLine(t, "accepting a client connection failed")
	if _, err := child.stdin.Write([]byte("release\n")); err != nil {
		t.Fatal(err)
	}
	child.waitLine(t, "CHILD RELEASED")
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var head [8]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		t.Fatalf("no answer once descriptors are free: %v\n%s", err, child.output())
	}
	if corr := int32(head[4])<<24 | int32(head[5])<<16 | int32(head[6])<<8 | int32(head[7]); corr != 7 {
		t.Fatalf("correlation id %d, want 7", corr)
	}
}

// hogChild is the proxy process of TestAcceptOutOfDescriptors and its
// output, line by line.
type hogChild struct {
	addr  string
	stdin io.WriteCloser
	lines chan string // closed when the child exits
	mu    sync.Mutex
	all   strings.Builder
}

func (h *hogChild) output() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.all.String()
}

// waitLine waits for a line containing want; the child exiting first fails
// the test (the proxy stopped).
func (h *hogChild) waitLine(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				t.Fatalf("the proxy exited waiting for %q:\n%s", want, h.output())
			}
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("no line with %q:\n%s", want, h.output())
		}
	}
}

// startHogChild starts the child serving on addr with STREAMSHIFT_FD_HOG
// set; nil with its output if it exited before serving.
func startHogChild(t *testing.T, addr string) (*hogChild, string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcceptOutOfDescriptors$", "-test.v")
	cmd.Env = append(os.Environ(), "STREAMSHIFT_FD_CHILD="+addr, "STREAMSHIFT_FD_HOG=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &hogChild{addr: addr, lines: make(chan string, 1024)}
	if h.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			h.mu.Lock()
			h.all.WriteString(lines.Text() + "\n")
			h.mu.Unlock()
			select {
			case h.lines <- lines.Text():
			default: // nobody waits for this many lines
			}
		}
		close(h.lines)
	}()
	for l := range h.lines {
		if strings.Contains(l, "CHILD READY") {
			return h, ""
		}
	}
	return nil, h.output()
}
