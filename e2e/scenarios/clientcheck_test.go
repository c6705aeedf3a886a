//go:build e2e

package scenarios

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamshift/streamshift/e2e/harness"
)

// Plain kafka-clients (idempotent and transactional producers, classic and KIP-848 consumer
// groups) directly against both brokers: the reference the proxy must reproduce.
func TestClientCheck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		broker   string
		protocol string
		txn      bool
	}{
		{harness.Kafka39, "classic", false},
		{harness.Kafka39, "classic", true},
		{harness.Kafka44, "classic", true},
		{harness.Kafka44, "consumer", false},
		{harness.Kafka44, "consumer", true},
	}
	out, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	brokers := map[string]*harness.Broker{}
	defer func() {
		for _, b := range brokers {
			_ = b.Stop()
		}
	}()
	ctx := context.Background()
	for i, tc := range cases {
		name := fmt.Sprintf("%s-%s-txn=%t", tc.broker, tc.protocol, tc.txn)
		t.Run(name, func(t *testing.T) {
			b := brokers[tc.broker]
			if b == nil {
				b, err = harness.StartBroker(ctx, harness.BrokerOptions{Version: tc.broker, Dir: filepath.Join(out, "broker-"+tc.broker)})
				if err != nil {
					t.Fatalf("start broker %s: %v", tc.broker, err)
				}
				brokers[tc.broker] = b
			}
			cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			res, err := harness.RunClientCheck(cctx, harness.ClientCheckOptions{
				Dir: filepath.Join(out, fmt.Sprintf("check-%d", i)), Bootstrap: b.Bootstrap,
				Topic: fmt.Sprintf("check-%d", i), GroupID: fmt.Sprintf("check-%d", i),
				GroupProtocol: tc.protocol, Transactional: tc.txn, Records: 500,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Produced != 500 || res.Consumed != 500 || res.Duplicates != 0 {
				t.Fatalf("got %+v, want 500 produced and consumed exactly once", res)
			}
		})
	}
}
