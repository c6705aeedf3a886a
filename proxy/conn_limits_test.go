package proxy

import (
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func counterValue(t testing.TB, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// served asserts the proxy answers an ApiVersions request on rc.
func (c *rawConn) served() {
	c.t.Helper()
	c.send(1, apiVersionsReq(3))
	if frameCorr(c.recv()) != 1 {
		c.t.Fatal("bad correlation id")
	}
}

// dialFrom connects to addr from the local address ip (another loopback
// address is another client IP).
func dialFrom(t testing.TB, ip, addr string) *rawConn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawConn{t, c}
}

// TestMaxConnections: beyond limits.max-connections a connection is closed
// at once while the admitted ones keep working; one closing makes room.
func TestMaxConnections(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	p := startProxy(t, c.ListenAddrs(), func(o *Options) { o.MaxConnections = 2 })
	a, b := dialRaw(t, p.addr), dialRaw(t, p.NodeAddr(0))
	a.served()
	b.served()
	refused := dialRaw(t, p.addr)
	refused.expectClosed()
	if n := counterValue(t, p.limits.refusedMax); n != 1 {
		t.Fatalf("streamshift_connections_refused_total{reason=max-connections} = %v, want 1", n)
	}
	a.served()
	b.served()
	a.Close()
	waitFor(t, "a connection admitted once another closed", func() error {
		p.mu.Lock()
		open := p.limits.open
		p.mu.Unlock()
		if open != 1 {
			return errNotYet
		}
		return nil
	})
	dialRaw(t, p.addr).served()
}

// TestMaxConnectionsPerIP: limits.max-connections-per-ip counts the
// client's IP, not the listener or the port: a second connection from
// 127.0.0.2 is closed, one from 127.0.0.3 is served.
func TestMaxConnectionsPerIP(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	p := startProxy(t, c.ListenAddrs(), func(o *Options) { o.MaxConnectionsPerIP = 1 })
	first := dialFrom(t, "127.0.0.2", p.addr)
	first.served()
	dialFrom(t, "127.0.0.2", p.NodeAddr(1)).expectClosed()
	other := dialFrom(t, "127.0.0.3", p.addr)
	other.served()
	first.served()
	if n := counterValue(t, p.limits.refusedIP); n != 1 {
		t.Fatalf("streamshift_connections_refused_total{reason=max-connections-per-ip} = %v, want 1", n)
	}
}

// TestMaxConnectionsFromDescriptors: the default leaves two descriptors per
// client, the listeners, an accept backlog and a reserve.
func TestMaxConnectionsFromDescriptors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		nofile             uint64
		listeners, backlog int
		want               int
	}{
		{20000, 33, 4096, (20000 - 256 - 33 - 4096) / 2},
		{4096, 33, 4096, (4096 - 256 - 33 - 1024) / 2},
		{1 << 20, 33, 4096, (1<<20 - 256 - 33 - 4096) / 2},
		{300, 33, 4096, 1},
		{1 << 63, 2, 128, (1<<30 - 256 - 2 - 128) / 2},
	} {
		if got := maxConnectionsFor(tc.nofile, tc.listeners, tc.backlog); got != tc.want {
			t.Errorf("maxConnectionsFor(%d, %d, %d) = %d, want %d", tc.nofile, tc.listeners, tc.backlog, got, tc.want)
		}
		if got := maxConnectionsFor(tc.nofile, tc.listeners, tc.backlog); got > 1 && uint64(2*got+tc.listeners+min(tc.backlog, int(min(tc.nofile, 1<<30))/4)+fdsReserved) > tc.nofile {
			t.Errorf("nofile %d: %d connections need more descriptors than there are", tc.nofile, got)
		}
	}
	// A configured value above what the limit allows is lowered to it.
	c := newCluster(t)
	p := startProxy(t, c.ListenAddrs(), func(o *Options) { o.MaxConnections = 1 << 40 })
	nofile, err := raiseFileLimit()
	if err != nil {
		t.Skip(err)
	}
	if want := maxConnectionsFor(nofile, len(p.listenAddrs()), acceptBacklog()); p.limits.max != want {
		t.Fatalf("max connections %d, want %d (nofile %d)", p.limits.max, want, nofile)
	}
}
