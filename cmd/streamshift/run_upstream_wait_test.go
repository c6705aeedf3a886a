package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/internal/testlog"
)

// TestAwaitUpstream: an upstream nobody listens on is logged as
// unreachable, naming it, and tried again (not ended at the first failure);
// once a cluster listens there, the wait ends without error.
func TestAwaitUpstream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nobody listens there now
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var logs testlog.Buffer
	done := make(chan error, 1)
	go func() { done <- awaitUpstream(ctx, cl, []string{addr}, 2*time.Second, zerolog.New(&logs)) }()
	for strings.Count(logs.String(), "upstream unreachable") < 2 {
		select {
		case err := <-done:
			t.Fatalf("the wait ended (%v) with nothing listening; logs:\n%s", err, logs.String())
		case <-ctx.Done():
			t.Fatalf("no second 'upstream unreachable' line; logs:\n%s", logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if !strings.Contains(logs.String(), addr) {
		t.Fatalf("the warning does not name %s:\n%s", addr, logs.String())
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(mustPort(t, addr)))
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	defer c.Close()
	if err := <-done; err != nil {
		t.Fatalf("the wait failed with the cluster up: %v", err)
	}
}

// TestAwaitUpstreamEndsWithContext: a stop while waiting says the upstream
// is unreachable.
func TestAwaitUpstreamEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cl, err := kgo.NewClient(kgo.SeedBrokers("127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var logs testlog.Buffer
	done := make(chan error, 1)
	go func() { done <- awaitUpstream(ctx, cl, []string{"127.0.0.1:1"}, time.Second, zerolog.New(&logs)) }()
	for !strings.Contains(logs.String(), "upstream unreachable") {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "upstream 127.0.0.1:1 unreachable") {
		t.Fatalf("error %v, want it to say the upstream is unreachable", err)
	}
}

func mustPort(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, c := range p {
		n = n*10 + int(c-'0')
	}
	return n
}
