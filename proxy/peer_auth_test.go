package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// TestPeerAuthDialsTheUpstream: the internal listener's admission of links
// relays their SASL on a connection to this proxy's upstream bootstrap
// (the link transport itself, proxy/peer, knows no upstream).
func TestPeerAuthDialsTheUpstream(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(1))
	p := &Proxy{opts: Options{Upstream: c.ListenAddrs(), DialTimeout: 5 * time.Second}}
	a := p.PeerAuth("__streamshift_cluster_t")
	if a.Group != "__streamshift_cluster_t" {
		t.Fatalf("admission asks READ on %q, want the instance group", a.Group)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := a.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	if _, err := kafkaframe.RoundTrip(conn, 1, nil, req, 1<<20); err != nil {
		t.Fatalf("ApiVersions on the admission's upstream connection: %v", err)
	}
}
