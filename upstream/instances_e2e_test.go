//go:build e2e

package upstream

import (
	"os"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestInstanceGroupOnKafka39: the instance group's balancer and its
// cooperative moves on a real Kafka 3.9 broker's classic group protocol.
func TestInstanceGroupOnKafka39(t *testing.T) {
	ctx, b := kafka39(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 12, 1, nil, "__streamshift_groups"); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	if os.Getenv("KGO_LOG") != "" {
		instanceOpts = []kgo.Opt{kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelDebug, nil))}
		defer func() { instanceOpts = nil }()
	}
	testInstanceGroup(t, []string{b.Bootstrap})
}
