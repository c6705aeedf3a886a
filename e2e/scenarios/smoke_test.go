//go:build e2e

package scenarios

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamshift/streamshift/e2e/harness"
)

// Kafka's own Streams smoke test (driver + two clients, the second joining mid-run) with
// the streams protocol on the native 4.4 broker, exactly-once: SUCCESS from the driver.
func TestKafkaSmokeStreams44(t *testing.T) {
	harness.NeedBench(t) // a baseline of Kafka alone (BENCHMARKS.md)
	t.Parallel()
	out, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	b, err := harness.StartBroker(context.Background(), harness.BrokerOptions{Version: harness.Kafka44, Dir: filepath.Join(out, "broker")})
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	defer b.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err = harness.RunKafkaSmoke(ctx, harness.SmokeOptions{
		Version: harness.Kafka44, Dir: filepath.Join(out, "smoke"), Bootstrap: b.Bootstrap,
		GroupProtocol: "streams", Guarantee: "exactly_once_v2", Clients: 2,
	})
	if err != nil {
		t.Fatalf("smoke test (logs in %s): %v", out, err)
	}
}
