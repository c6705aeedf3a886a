//go:build e2e

package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSmokeClientLogsCorruptedTask: a "Closed dirty" that follows Kafka
// Streams' own corruption report for that task (a standby turned active
// before its first checkpoint under exactly-once, as a CI run logged it) is
// not a migration fault; any other "Closed dirty" still is.
func TestSmokeClientLogsCorruptedTask(t *testing.T) {
	t.Parallel()
	const corrupted = `[2026-12-02T08:22:32,679] WARN stream-thread [S-StreamThread-1] Detected the states of tasks [0_2] are corrupted. Will close the task as dirty and re-create and bootstrap from scratch. (StreamThread)
[2026-12-02T08:22:32,838] INFO stream-thread [S-StreamThread-1] task [0_2] Closed dirty (StreamTask)
`
	const other = "[2026-12-02T08:22:40,000] INFO stream-thread [S-StreamThread-1] task [1_1] Closed dirty (StreamTask)\n"
	for _, tc := range []struct {
		name, log string
		fails     bool
	}{{"corrupted task", corrupted, false}, {"another task", corrupted + other, true}, {"no report", other, true}} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "s1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "s1", "log"), []byte(tc.log), 0o644); err != nil {
			t.Fatal(err)
		}
		err := checkSmokeClientLogs(dir)
		if (err != nil) != tc.fails || (err != nil && !strings.Contains(err.Error(), "[1_1]")) {
			t.Errorf("%s: %v, want failing %v (on task 1_1)", tc.name, err, tc.fails)
		}
	}
}
