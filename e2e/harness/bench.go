package harness

import (
	"os"
	"testing"
)

// NeedBench skips t unless STREAMSHIFT_BENCH is set: a measurement (a
// benchmark, or a baseline of Kafka alone that a benchmark compares
// against), not a check of streamshift, so not in `make test`.
func NeedBench(t testing.TB) {
	t.Helper()
	if os.Getenv("STREAMSHIFT_BENCH") == "" {
		t.Skip("benchmark: set STREAMSHIFT_BENCH=1")
	}
}
