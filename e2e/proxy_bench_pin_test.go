//go:build e2e

package e2e_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// benchProxyCPU is the CPU every proxy process of the benchmark is pinned
// to, or -1 (STREAMSHIFT_BENCH_PIN unset: everything shares every CPU).
var benchProxyCPU = -1

// pinProcess sets the CPU affinity of every thread of process pid to cpus.
// Threads created afterwards inherit it from the thread that creates them;
// two passes catch threads started during the first.
func pinProcess(pid int, cpus ...int) error {
	var set unix.CPUSet
	for _, cpu := range cpus {
		set.Set(cpu)
	}
	for range 2 {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return fmt.Errorf("threads of %d: %w", pid, err)
		}
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("pin thread %d of %d to CPUs %v: %w", tid, pid, cpus, err)
			}
		}
	}
	return nil
}

// pinBenchProxies, with STREAMSHIFT_BENCH_PIN set, gives each proxy of the
// benchmark a core of its own, as on a host of its own: this process (the
// clients) and what it starts from now on (broker, load generators) stay on
// CPU 0, and startBenchProxy moves each proxy to CPU 1. The returned func
// undoes it (for a defer); pinned says whether it pinned.
func pinBenchProxies(t *testing.T) (undo func(), pinned bool) {
	t.Helper()
	if os.Getenv("STREAMSHIFT_BENCH_PIN") == "" {
		return func() {}, false
	}
	if runtime.NumCPU() < 2 {
		t.Fatal("STREAMSHIFT_BENCH_PIN needs 2 CPUs")
	}
	if err := pinProcess(os.Getpid(), 0); err != nil {
		t.Fatal(err)
	}
	benchProxyCPU = 1
	return func() {
		benchProxyCPU = -1
		_ = pinProcess(os.Getpid(), 0, 1)
	}, true
}
