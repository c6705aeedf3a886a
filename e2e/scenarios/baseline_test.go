//go:build e2e

package scenarios

import (
	"testing"

	"github.com/streamshift/streamshift/e2e/harness"
)

// The baselines later features must beat or match: the same scale-out and crash steps,
// exactly-once, under continuous input, directly against the brokers (no proxy).
func baselineSteps() []harness.Step {
	return []harness.Step{
		harness.StartInstances("a1"),
		harness.StartInstances("a2", "a3"),
		harness.Kill9Instance("a3"),
	}
}

// Classic rebalance protocol on Apache Kafka 3.9 (3.9 clients).
func TestBaselineClassic39(t *testing.T) {
	harness.NeedBench(t) // a baseline of Kafka alone (BENCHMARKS.md)
	t.Parallel()
	harness.RunScenario(t, harness.Scenario{
		Name:          "classic on 3.9",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App39,
		GroupProtocol: "classic",
		Guarantee:     "exactly_once_v2",
		Steps:         baselineSteps(),
	})
}

// Native KIP-1071 streams groups on Apache Kafka 4.4 (4.4 clients).
func TestBaselineStreams44(t *testing.T) {
	harness.NeedBench(t) // a baseline of Kafka alone (BENCHMARKS.md)
	t.Parallel()
	harness.RunScenario(t, harness.Scenario{
		Name:          "native streams on 4.4",
		Broker:        harness.Kafka44,
		AppBuild:      harness.App44,
		GroupProtocol: "streams",
		Guarantee:     "exactly_once_v2",
		Steps:         baselineSteps(),
	})
}
