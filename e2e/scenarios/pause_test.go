//go:build e2e

package scenarios

import (
	"testing"
	"time"

	"github.com/streamshift/streamshift/e2e/harness"
)

// A frozen instance (SIGSTOP past the session timeout) on classic 3.9: the group moves its
// tasks away, and on waking it finds itself fenced and closes its tasks dirty. Checks that the
// harness sees dirty closes (the signal migration tests rely on) and that the output stays
// exact under exactly-once.
func TestPauseClassic39(t *testing.T) {
	t.Parallel()
	rep := harness.RunScenario(t, harness.Scenario{
		Name:          "pause on classic 3.9",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App39,
		GroupProtocol: "classic",
		Guarantee:     "exactly_once_v2",
		Partitions:    2,
		Hold:          5 * time.Second,
		Steps: []harness.Step{
			harness.StartInstances("a1", "a2"),
			harness.PauseInstance("a2", 16*time.Second),
		},
	})
	if rep.Steps[0].DirtyClose != 0 {
		t.Errorf("step 1: %d tasks closed dirty while starting, want 0", rep.Steps[0].DirtyClose)
	}
	if rep.Steps[1].DirtyClose == 0 {
		t.Errorf("step 2: the fenced instance closed no task dirty (is the log pattern still right?)")
	}
}
