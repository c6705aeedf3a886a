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
			// A refused refresh fails only at its deadline (the client
			// retries), so that one is short; a good one gets the time a
			// loaded machine needs (it flaked at 2 s under load).
			dial, wait := 500*time.Millisecond, 2*time.Second
			if tc.ok {
				dial, wait = 10*time.Second, 60*time.Second
			}
			p := startProxy(t, c.ListenAddrs(), func(o *Options) {
				o.ControlPlane = tc.opts
				o.DialTimeout = dial
			})
			ctx, cancel := context.WithTimeout(context.Background(), wait)
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
