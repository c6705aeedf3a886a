//go:build e2e

package e2e_test

import (
	"testing"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestStreamsProxyBrokerVersions: the oldest broker streamshift supports
// (Kafka 2.8, ZooKeeper mode) and an early KRaft release (3.5), neither of
// which knows streams groups, run a Kafka Streams 4.4 app on the streams
// protocol through streamshift: exactly once, two instances, one of them
// killed -9, the output verified exactly. Kafka 3.9 is covered by the rest
// of the suite, and native 4.4 by TestBaselineStreams44 (the reference).
func TestStreamsProxyBrokerVersions(t *testing.T) {
	t.Parallel()
	for _, v := range []string{harness.Kafka28, harness.Kafka35} {
		t.Run("kafka-"+v, func(t *testing.T) {
			t.Parallel() // two brokers of their own: they fill both of make's e2e lanes
			harness.RunScenario(t, harness.Scenario{
				Name:          "streams through streamshift on " + v + ", a member crash",
				Broker:        v,
				AppBuild:      harness.App44,
				GroupProtocol: "streams",
				Guarantee:     "exactly_once_v2",
				Route:         throughStreamshift("versions-" + v),
				Steps: []harness.Step{
					harness.StartInstances("a1", "a2"),
					harness.Kill9Instance("a2"),
				},
			})
		})
	}
}
