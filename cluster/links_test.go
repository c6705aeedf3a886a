package cluster

import (
	"net"
	"os"
	"strings"
	"testing"

	"github.com/streamshift/streamshift/upstream"
)

// TestInternalAddress: the address an instance publishes for its links is
// cluster.advertised-address when set; else the host of cluster.listen
// with the port the listener bound (a port 0 listen publishes the real
// one), the machine's host name for a wildcard host.
func TestInternalAddress(t *testing.T) {
	t.Parallel()
	bound := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 41234}
	hostname, err := os.Hostname()
	if err != nil {
		t.Skip("no host name:", err)
	}
	for _, c := range []struct{ listen, advertised, want string }{
		{"127.0.0.2:0", "proxy-a.internal:9192", "proxy-a.internal:9192"},
		{"127.0.0.2:0", "", "127.0.0.2:41234"},
		{"0.0.0.0:9192", "", net.JoinHostPort(hostname, "41234")},
		{":9192", "", net.JoinHostPort(hostname, "41234")},
		{"[::]:9192", "", net.JoinHostPort(hostname, "41234")},
	} {
		got, err := internalAddress(c.listen, c.advertised, bound)
		if err != nil || got != c.want {
			t.Errorf("internalAddress(%q, %q): %q %v, want %q", c.listen, c.advertised, got, err, c.want)
		}
	}
	if _, err := internalAddress("no-port", "", bound); err == nil || !strings.Contains(err.Error(), "cluster.listen") {
		t.Errorf("a listen address without a port: %v, want an error naming cluster.listen", err)
	}
}

// TestPeersOf: the links follow the other instances of the map that
// publish an internal address (an instance of an earlier release has none).
func TestPeersOf(t *testing.T) {
	t.Parallel()
	m := upstream.ClusterMap{Instances: map[string]upstream.InstanceInfo{
		"a": {ProxyID: "a", Internal: "a:1"}, "b": {ProxyID: "b", Internal: "b:1"}, "old": {ProxyID: "old"},
	}}
	got := peersOf(m, "a")
	if len(got) != 1 || got["b"] != "b:1" {
		t.Fatalf("peersOf: %v, want only b", got)
	}
}
