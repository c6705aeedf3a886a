package main

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestClusterInternalListenerFreePort: two instances of one cluster with
// cluster.listen left at its default (the listen host, port 0) each bind a
// port the system picked, publish their host with that port in the
// instance group, and find each other there: every link comes up.
func TestClusterInternalListenerFreePort(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(kversion.V3_9_0()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close) // after the instances stopped
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hosts := []string{"127.0.0.1", "127.0.0.2"}
	// The bootstrap, node ports +1 and +2, the admin port +3: no port for
	// the internal listener.
	port, err := harness.FreePortsOnHosts(hosts, 4)
	if err != nil {
		t.Fatal(err)
	}
	ins := []*testInstance{
		startInstance(t, cluster.ListenAddrs(), "a", hosts[0], port, "STREAMSHIFT_CLUSTER_LISTEN="),
		startInstance(t, cluster.ListenAddrs(), "b", hosts[1], port, "STREAMSHIFT_CLUSTER_LISTEN="),
	}
	for {
		ok := true
		for i, in := range ins {
			v := in.view(t)
			host, p, err := net.SplitHostPort(v.Self.Internal)
			if err != nil || host != in.host || p == "0" {
				t.Fatalf("%s publishes internal address %q, want %s with the port it bound", in.id, v.Self.Internal, in.host)
			}
			other := ins[1-i]
			if !v.Links[other.id].Up || v.Instances[other.id].Internal != other.view(t).Self.Internal {
				ok = false
			}
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			for _, in := range ins {
				t.Logf("%s: links %v, self %+v", in.id, in.view(t).Links, in.view(t).Self)
			}
			t.Fatal("the instances' links did not come up")
		case <-time.After(100 * time.Millisecond):
		}
	}
}
