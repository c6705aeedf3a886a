package harness

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Tracker follows every app instance's state and active tasks (from their events) and
// answers when the group has settled: every live instance RUNNING, every task of the topology
// active on exactly one live instance ("all running"), and additionally the active tasks
// spread evenly, max − min ≤ 1 per instance ("balanced").
type Tracker struct {
	tasks []string

	mu      sync.Mutex
	insts   map[string]*instView
	history []sample
	changed chan struct{}
}

type instView struct {
	alive   bool
	state   string
	active  []string
	standby []string
}

type sample struct {
	at                   time.Time
	allRunning, balanced bool
	why                  string // what is missing, for timeouts
}

// NewTracker tracks a group whose topology has the given tasks (see TopologyTasks).
func NewTracker(tasks []string) *Tracker {
	return &Tracker{tasks: append([]string(nil), tasks...), insts: map[string]*instView{}, changed: make(chan struct{})}
}

// Started records that an instance was launched at t: it counts as live but not yet running.
func (tr *Tracker) Started(name string, t time.Time) {
	tr.update(t, func() { tr.insts[name] = &instView{alive: true, state: "CREATED"} })
}

// Paused records that an instance was frozen (SIGSTOP) at t: it counts as not running until
// it reports its state again.
func (tr *Tracker) Paused(name string, t time.Time) {
	tr.update(t, func() {
		if v := tr.insts[name]; v != nil && v.alive {
			v.state = "PAUSED"
		}
	})
}

// Gone records that an instance was killed or stopped at t: its tasks are no longer running.
func (tr *Tracker) Gone(name string, t time.Time) {
	tr.update(t, func() {
		if v := tr.insts[name]; v != nil {
			v.alive = false
		}
	})
}

// Observe feeds one app event (use as AppOptions.OnEvent).
func (tr *Tracker) Observe(ev Event) {
	tr.update(ev.Time, func() {
		v := tr.insts[ev.App]
		if v == nil || !v.alive {
			return // events of an instance already declared gone are history
		}
		switch ev.Kind {
		case "state":
			v.state = ev.To
		case "tasks":
			v.state = ev.State
			v.active = ev.Active
			v.standby = ev.Standby
		case "processed":
			// Also a heartbeat of the app's state: refreshes an instance that was paused.
			if ev.State != "" {
				v.state = ev.State
			}
		case "closing", "closed", "stopped":
			v.state = "NOT_RUNNING"
		}
	})
}

func (tr *Tracker) update(t time.Time, f func()) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	f()
	all, bal, why := tr.evaluate()
	tr.history = append(tr.history, sample{at: t, allRunning: all, balanced: bal, why: why})
	close(tr.changed)
	tr.changed = make(chan struct{})
}

func (tr *Tracker) evaluate() (allRunning, balanced bool, why string) {
	owner := map[string]string{}
	var live []string
	var problems []string
	for name, v := range tr.insts {
		if !v.alive {
			continue
		}
		live = append(live, name)
		if v.state != "RUNNING" {
			problems = append(problems, fmt.Sprintf("%s is %s", name, v.state))
		}
		for _, t := range v.active {
			if o, dup := owner[t]; dup {
				problems = append(problems, fmt.Sprintf("task %s active on %s and %s", t, o, name))
			}
			owner[t] = name
		}
	}
	if len(live) == 0 {
		return false, false, "no live instance"
	}
	var missing []string
	for _, t := range tr.tasks {
		if _, ok := owner[t]; !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		problems = append(problems, "tasks not active anywhere: "+strings.Join(missing, ","))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return false, false, strings.Join(problems, "; ")
	}
	lo, hi := len(tr.tasks), 0
	for _, name := range live {
		n := len(tr.insts[name].active)
		lo, hi = min(lo, n), max(hi, n)
	}
	if hi-lo > 1 {
		return true, false, fmt.Sprintf("unbalanced: %s", tr.distribution(live))
	}
	return true, true, ""
}

func (tr *Tracker) distribution(live []string) string {
	sort.Strings(live)
	parts := make([]string, 0, len(live))
	for _, n := range live {
		parts = append(parts, fmt.Sprintf("%s=%d", n, len(tr.insts[n].active)))
	}
	return strings.Join(parts, " ")
}

// Assignment returns each live instance's active tasks right now.
func (tr *Tracker) Assignment() map[string][]string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	m := map[string][]string{}
	for name, v := range tr.insts {
		if v.alive {
			m[name] = append([]string(nil), v.active...)
		}
	}
	return m
}

// Settled is when, after an action, the group reached each condition for good.
type Settled struct {
	AllRunning time.Time // start of the final period in which every task was active and every instance RUNNING
	Balanced   time.Time // start of the final period that was also balanced
}

// WaitSettled waits until the group has been balanced (and so all running) for quiet, then
// reports when each condition last became true, no earlier than since (the action's time).
func (tr *Tracker) WaitSettled(ctx context.Context, since time.Time, quiet time.Duration) (Settled, error) {
	for {
		tr.mu.Lock()
		ch := tr.changed
		var s Settled
		var cur sample
		if n := len(tr.history); n > 0 {
			cur = tr.history[n-1]
			s.AllRunning = tr.runStart(since, func(x sample) bool { return x.allRunning })
			s.Balanced = tr.runStart(since, func(x sample) bool { return x.balanced })
		}
		tr.mu.Unlock()
		var wait time.Duration = time.Second
		if cur.balanced {
			held := time.Since(s.Balanced)
			if held >= quiet {
				return s, nil
			}
			wait = quiet - held
		}
		select {
		case <-ch:
		case <-time.After(wait):
		case <-ctx.Done():
			why := cur.why
			if cur.balanced {
				why = "balanced, but not for long enough"
			}
			return s, fmt.Errorf("group did not settle: %s (%w)", why, ctx.Err())
		}
	}
}

// runStart is when the trailing run of samples satisfying cond began, clamped to since.
// Callers hold mu and know the last sample satisfies cond when the answer matters.
func (tr *Tracker) runStart(since time.Time, cond func(sample) bool) time.Time {
	start := since
	for i := len(tr.history) - 1; i >= 0; i-- {
		s := tr.history[i]
		if !cond(s) {
			break
		}
		start = s.at
	}
	if start.Before(since) {
		return since
	}
	return start
}

// LongestGap is the longest time without an arrival in [from, to]: the gaps between the last
// arrival at or before from, every arrival in the window, and to. arrivals must be sorted.
func LongestGap(arrivals []time.Time, from, to time.Time) time.Duration {
	i := sort.Search(len(arrivals), func(i int) bool { return arrivals[i].After(from) })
	prev := from
	if i > 0 {
		prev = arrivals[i-1]
	}
	var longest time.Duration
	for ; i < len(arrivals) && !arrivals[i].After(to); i++ {
		longest = max(longest, arrivals[i].Sub(prev))
		prev = arrivals[i]
	}
	return max(longest, to.Sub(prev))
}

// OutputGaps returns the longest gap in the whole output and the longest in any one output
// partition, within [from, to].
func OutputGaps(updates []Update, from, to time.Time) (overall, perPartition time.Duration) {
	all := make([]time.Time, 0, len(updates))
	byPart := map[int32][]time.Time{}
	for _, u := range updates {
		all = append(all, u.Arrived)
		byPart[u.Partition] = append(byPart[u.Partition], u.Arrived)
	}
	sortTimes(all)
	overall = LongestGap(all, from, to)
	for _, ts := range byPart {
		sortTimes(ts)
		perPartition = max(perPartition, LongestGap(ts, from, to))
	}
	return overall, perPartition
}

func sortTimes(ts []time.Time) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
}
