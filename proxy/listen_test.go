package proxy

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestTakenPortNamed: a listen address already taken stops the start with
// an error naming it and its node (gnet's own error names none).
func TestTakenPortNamed(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	for attempt := 0; attempt < 10; attempt++ {
		taken, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := taken.Addr().(*net.TCPAddr).Port
		// Node 2's port is the taken one.
		p, err := New(Options{Upstream: c.ListenAddrs(), Listen: "127.0.0.1:" + strconv.Itoa(port-3), NodePortBase: port - 2,
			NodeIDMin: 0, NodeIDMax: 2, Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err = p.Run(ctx)
		cancel()
		taken.Close()
		want := "listen 127.0.0.1:" + strconv.Itoa(port) + " (node 2): address already in use"
		if err != nil && strings.Contains(err.Error(), "address already in use") && !strings.Contains(err.Error(), "(node 2)") {
			continue // another process has one of the ports below
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Run: %v, want an error with %q", err, want)
		}
		return
	}
	t.Fatal("no free ports below a free one")
}

// TestListenBeforeServe: between Listen and Run every port is bound (a
// second proxy on them fails), the proxy is neither serving nor ready, and
// a client that connects meanwhile is not closed: its request waits (in
// the kernel's accept queue) and is answered once Run serves.
func TestListenBeforeServe(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	tp := startProxy(t, c.ListenAddrs(), nil)
	tp.stop() // frees its ports, known to be free
	opts := tp.opts
	opts.Metrics = nil
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Listen(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	other, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Listen(context.Background()); err == nil || !strings.Contains(err.Error(), "(bootstrap): address already in use") {
		other.Close()
		t.Fatalf("second Listen on the same ports: %v", err)
	}
	p.Starting("loading the group log")
	if p.Ready() || p.Serving() {
		t.Fatal("ready before Run")
	}
	if why := p.NotReady(); why != "starting: loading the group log" {
		t.Fatalf("not ready because %q, want the start-up step", why)
	}
	early := dialRaw(t, opts.Listen)
	early.send(1, apiVersionsReq(3))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	// recv fails the test if the connection was closed (the old
	// accept-and-close) instead of answered.
	if frame := early.recv(); frameCorr(frame) != 1 {
		t.Fatalf("answer with correlation id %d, want 1", frameCorr(frame))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
