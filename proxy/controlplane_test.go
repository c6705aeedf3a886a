package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// TestControlPlaneSASL: against an upstream that requires SASL, the proxy's
// own metadata fetch (the node table, readiness) works only with the
// credentials given in Options.ControlPlane.
func TestControlPlaneSASL(t *testing.T) {
	t.Parallel()
	c := newCluster(t, kfake.EnableSASL(), kfake.Superuser("PLAIN", "streamshift", "secret"))
	for _, tc := range []struct {
		name string
		opts []kgo.Opt
		ok   bool
	}{
		{"no credentials", nil, false},
		{"wrong password", []kgo.Opt{kgo.SASL(plain.Auth{User: "streamshift", Pass: "nope"}.AsMechanism())}, false},
		{"PLAIN", []kgo.Opt{kgo.SASL(plain.Auth{User: "streamshift", Pass: "secret"}.AsMechanism())}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startProxy(t, c.ListenAddrs(), func(o *Options) {
				o.ControlPlane = tc.opts
				o.DialTimeout = 500 * time.Millisecond
			})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			err := p.refreshMetadata(ctx)
			if tc.ok != (err == nil) {
				t.Fatalf("metadata refresh: err = %v, want success %v", err, tc.ok)
			}
			if tc.ok {
				if _, known := p.nodes.lookup(0); !known || !p.Ready() {
					t.Fatalf("node 0 known %v, ready %v after a successful refresh", known, p.Ready())
				}
			} else if p.Ready() {
				t.Fatal("ready without upstream metadata")
			}
		})
	}
}
