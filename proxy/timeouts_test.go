package proxy

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestIdleConnectionClosed: a connection with no request and nothing in
// flight for limits.connections-max-idle is closed; one whose request is
// still being served is not, however long that takes.
func TestIdleConnectionClosed(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	p := startProxy(t, c.ListenAddrs(), func(o *Options) { o.ConnectionsMaxIdle = 300 * time.Millisecond })
	// Served for longer than the idle time: not idle while in flight.
	if err := p.Register(int16(kmsg.StreamsGroupHeartbeat), 0, 1, true, &slowHeartbeat{delay: time.Second}); err != nil {
		t.Fatal(err)
	}
	busy := dialRaw(t, p.addr)
	busy.send(5, &kmsg.StreamsGroupHeartbeatRequest{Version: 1, Group: "g"})
	if corr := frameCorr(busy.recv()); corr != 5 {
		t.Fatalf("correlation id %d", corr)
	}
	busy.expectClosed() // idle after its answer
	rc := dialRaw(t, p.addr)
	rc.served()
	rc.expectClosed()
	if n := counterValue(t, p.timeouts.idle); n != 2 {
		t.Fatalf("streamshift_connections_timed_out_total{reason=idle} = %v, want 2", n)
	}
}

// TestRequestTimeout: a request whose bytes stop arriving (a frame size
// and a few bytes, then nothing) closes the connection after
// limits.request-timeout, although the connection is younger than the
// idle timeout.
func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	p := startProxy(t, c.ListenAddrs(), func(o *Options) { o.RequestTimeout = 300 * time.Millisecond })
	rc := dialRaw(t, p.addr)
	rc.served()
	if _, err := rc.Write([]byte{0, 0, 0, 100, 0, 18, 0, 3}); err != nil {
		t.Fatal(err)
	}
	rc.expectClosed()
	if n := counterValue(t, p.timeouts.request); n != 1 {
		t.Fatalf("streamshift_connections_timed_out_total{reason=request-timeout} = %v, want 1", n)
	}
	if n := counterValue(t, p.timeouts.idle); n != 0 {
		t.Fatalf("closed as idle (%v), not by the request timeout", n)
	}
}

// TestTLSTimeouts: both timeouts hold on TLS client connections once their
// handshake is done (before, tls.handshake-timeout does).
func TestTLSTimeouts(t *testing.T) {
	t.Parallel()
	s := startTLSSetup(t, func(o *Options) {
		o.RequestTimeout = 300 * time.Millisecond
		o.ConnectionsMaxIdle = 600 * time.Millisecond
	})
	dial := func() *rawConn {
		c, err := tls.Dial("tcp", s.p.addr, s.clientPool)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		return &rawConn{t, c}
	}
	idle := dial()
	idle.served()
	stalled := dial()
	stalled.served()
	if _, err := stalled.Write([]byte{0, 0, 0, 100, 0, 18}); err != nil {
		t.Fatal(err)
	}
	stalled.expectClosed()
	idle.expectClosed()
	if r, i := counterValue(t, s.p.timeouts.request), counterValue(t, s.p.timeouts.idle); r != 1 || i != 1 {
		t.Fatalf("closed by request timeout %v, idle %v; want 1 each", r, i)
	}
}
