package harness

import (
	"context"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestLongestGap(t *testing.T) {
	arr := []time.Time{at(0), at(100), at(900), at(1000)}
	tests := []struct {
		name     string
		from, to time.Time
		want     time.Duration
	}{
		{"whole", at(0), at(1000), 800 * time.Millisecond},
		{"window starts after an arrival: gap from that arrival", at(500), at(1000), 800 * time.Millisecond},
		{"stall until the end counts", at(0), at(3000), 2000 * time.Millisecond},
		{"window before any arrival", at(-500), at(0), 500 * time.Millisecond},
		{"empty window after last", at(1000), at(1200), 200 * time.Millisecond},
	}
	for _, tc := range tests {
		if got := LongestGap(arr, tc.from, tc.to); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestOutputGapsPerPartition(t *testing.T) {
	us := []Update{
		{Partition: 0, Arrived: at(0)}, {Partition: 1, Arrived: at(50)},
		{Partition: 0, Arrived: at(100)}, {Partition: 1, Arrived: at(700)},
		{Partition: 0, Arrived: at(200)}, {Partition: 1, Arrived: at(800)},
	}
	overall, part := OutputGaps(us, at(0), at(800))
	if overall != 500*time.Millisecond || part != 650*time.Millisecond {
		t.Fatalf("got overall=%s part=%s, want 500ms and 650ms", overall, part)
	}
}

func tasksEv(app string, ms int, state string, active ...string) Event {
	return Event{App: app, Time: at(ms), Kind: "tasks", State: state, Active: active}
}

func TestTrackerSettles(t *testing.T) {
	tr := NewTracker(TopologyTasks(2)) // 0_0 0_1 1_0 1_1
	tr.Started("a1", at(0))
	tr.Observe(tasksEv("a1", 500, "RUNNING", "0_0", "0_1", "1_0", "1_1"))
	// Scale out at 1000: a2 joins, and the tasks move in two rounds.
	tr.Started("a2", at(1000))
	tr.Observe(tasksEv("a1", 1500, "REBALANCING", "0_0", "1_0"))
	tr.Observe(tasksEv("a2", 2000, "RUNNING"))
	tr.Observe(tasksEv("a1", 2100, "RUNNING", "0_0", "1_0"))
	tr.Observe(tasksEv("a2", 2500, "RUNNING", "0_1", "1_1"))

	tr.mu.Lock()
	last := tr.history[len(tr.history)-1]
	allRun := tr.runStart(at(1000), func(s sample) bool { return s.allRunning })
	tr.mu.Unlock()
	if !last.balanced || !allRun.Equal(at(2500)) {
		t.Fatalf("want balanced from 2500ms, got balanced=%v from %s (%s)", last.balanced, allRun.Sub(t0), last.why)
	}
	// The run started long ago in wall-clock terms, so a short quiet period has passed.
	s, err := tr.WaitSettled(context.Background(), at(1000), time.Millisecond)
	if err != nil || !s.Balanced.Equal(at(2500)) || !s.AllRunning.Equal(at(2500)) {
		t.Fatalf("WaitSettled = %+v, %v", s, err)
	}
}

func TestTrackerSeesMissingAndDuplicateTasks(t *testing.T) {
	tr := NewTracker(TopologyTasks(1)) // 0_0 1_0
	tr.Started("a1", at(0))
	tr.Started("a2", at(0))
	tr.Observe(tasksEv("a1", 10, "RUNNING", "0_0", "1_0"))
	tr.Observe(tasksEv("a2", 20, "RUNNING", "1_0"))
	if why := tr.history[len(tr.history)-1].why; !strings.Contains(why, "task 1_0 active on") {
		t.Fatalf("duplicate not reported: %q", why)
	}
	tr.Gone("a1", at(30))
	last := tr.history[len(tr.history)-1]
	if last.allRunning || !strings.Contains(last.why, "0_0") {
		t.Fatalf("a killed instance's tasks must count as not running: %+v", last)
	}
	// Events of a gone instance are ignored.
	tr.Observe(tasksEv("a1", 40, "RUNNING", "0_0"))
	if tr.history[len(tr.history)-1].allRunning {
		t.Fatal("event of a gone instance revived its tasks")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := tr.WaitSettled(ctx, at(30), time.Millisecond); err == nil || !strings.Contains(err.Error(), "0_0") {
		t.Fatalf("WaitSettled should time out naming the missing task, got %v", err)
	}
}

func TestTrackerUnbalanced(t *testing.T) {
	tr := NewTracker(TopologyTasks(2))
	tr.Started("a1", at(0))
	tr.Started("a2", at(0))
	tr.Observe(tasksEv("a1", 10, "RUNNING", "0_0", "0_1", "1_0", "1_1"))
	tr.Observe(tasksEv("a2", 20, "RUNNING"))
	last := tr.history[len(tr.history)-1]
	if !last.allRunning || last.balanced {
		t.Fatalf("want all running but unbalanced, got %+v", last)
	}
}

func TestTrackerPausedUntilItReportsAgain(t *testing.T) {
	tr := NewTracker(TopologyTasks(1))
	tr.Started("a1", at(0))
	tr.Observe(tasksEv("a1", 10, "RUNNING", "0_0", "1_0"))
	tr.Paused("a1", at(20))
	if last := tr.history[len(tr.history)-1]; last.allRunning || !strings.Contains(last.why, "PAUSED") {
		t.Fatalf("a paused instance must not count as running: %+v", last)
	}
	tr.Observe(Event{App: "a1", Time: at(30), Kind: "processed", Count: 5, State: "RUNNING"})
	if last := tr.history[len(tr.history)-1]; !last.balanced {
		t.Fatalf("a processed event with RUNNING must revive it: %+v", last)
	}
}
