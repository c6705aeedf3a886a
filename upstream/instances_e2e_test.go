//go:build e2e

package upstream

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	e2e "github.com/streamshift/streamshift/e2e/harness"
)

// TestInstanceGroupOnKafka39: the instance group's balancer and its
// cooperative moves on a real Kafka 3.9 broker's classic group protocol.
func TestInstanceGroupOnKafka39(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := e2e.StartBroker(ctx, e2e.BrokerOptions{Version: e2e.Kafka39, Dir: filepath.Join(t.TempDir(), "broker")})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
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
