//go:build e2e

package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
)

// The stateful app's changelog is preloaded so that restoring one task
// takes seconds here: warmupPreload records of warmupValueBytes on each of
// the 4 changelog partitions, under keys no input record has (the output
// never shows them).
const (
	warmupChangelog   = "e2e-count-counts-changelog"
	warmupPreload     = 100_000
	warmupValueBytes  = 200
	warmupRecordBytes = warmupValueBytes + 12 // key "pre-<p>-<i>" on average
	warmupPartitions  = 4                     // input partitions: 4 stateful tasks, 1_0 … 1_3
)

// TestStreamsWarmup: a stateful Kafka Streams 4.4 app (RocksDB store,
// exactly once) on the streams protocol through streamshift on Kafka 3.9,
// 1 → 2 → 3 instances, then kill -9 one. With warm-up tasks (the default)
// a moved stateful task keeps running on its owner while the new instance
// restores it as a warm-up (a standby on the client: the group has no
// standbys configured), then moves once caught up; the output stays exact.
// It reports, per step, the longest per-partition output gap, the time to
// balanced and the changelog records (and bytes) read.
//
// With E2E_WARMUP_COMPARE=1 it runs the same app and steps three more
// times, for BENCHMARKS.md: through streamshift with Kafka 4.4's behaviour
// (no warm-ups, the configured heartbeat interval throughout), on Kafka
// 4.4's own coordinator, and on the classic protocol on Kafka 3.9 (its
// HighAvailabilityTaskAssignor: warm-ups and probing rebalances at the
// minimum interval, 60 s).
func TestStreamsWarmup(t *testing.T) {
	variants := []warmupVariant{{name: "streamshift", broker: harness.Kafka39, protocol: "streams", proxyID: "warmup", warmups: true}}
	if os.Getenv("E2E_WARMUP_COMPARE") == "" {
		t.Parallel()
	} else {
		// The comparison's timings go to BENCHMARKS.md: run alone, before the parallel tests.
		variants = append(variants,
			warmupVariant{name: "streamshift-as-4.4", broker: harness.Kafka39, protocol: "streams", proxyID: "nowarmup",
				env: []string{"STREAMSHIFT_STREAMS_NUM_WARMUP_REPLICAS=0", "STREAMSHIFT_STREAMS_RECONCILIATION_HEARTBEAT_INTERVAL_MS=5000"}},
			warmupVariant{name: "native-4.4", broker: harness.Kafka44, protocol: "streams"},
			warmupVariant{name: "classic-3.9", broker: harness.Kafka39, protocol: "classic", warmups: true,
				appExtra: []string{"probing.rebalance.interval.ms=60000"}},
		)
	}
	// E2E_WARMUP_ROUNDS=n runs every variant n times (round-robin, so the
	// machine's load falls on all alike) and adds a table of the medians.
	rounds := 1
	if n, err := strconv.Atoi(os.Getenv("E2E_WARMUP_ROUNDS")); err == nil && n > 1 {
		rounds = n
	}
	all := make([][]warmupRun, rounds)
	for round := range rounds {
		for _, v := range variants {
			name := v.name
			if rounds > 1 {
				name = fmt.Sprintf("%s/round-%d", v.name, round+1)
			}
			t.Run(name, func(t *testing.T) { all[round] = append(all[round], runWarmupScenario(t, v)) })
			if t.Failed() {
				return
			}
		}
		if len(variants) > 1 || rounds > 1 {
			t.Logf("round %d, the same app and steps, side by side (load average %s):\n%s", round+1, loadAverage(), compareWarmupRuns(variants, all[round]))
		}
	}
	if rounds > 1 {
		t.Logf("medians of %d rounds:\n%s", rounds, compareWarmupRuns(variants, medianWarmupRuns(all)))
	}
}

// warmupVariant is one way to run the app: through streamshift (proxyID
// set) or on the broker's own coordinator.
type warmupVariant struct {
	name, broker, protocol, proxyID string
	env, appExtra                   []string
	warmups                         bool // tasks are expected to be warmed up, then moved
}

type warmupRun struct {
	rep      *harness.Report
	restored []int64 // per step: changelog records read (active restores + standby/warm-up loads)
	// per step: action → the stateful active tasks spread evenly too (as
	// the tracker's balanced, counting only them); -1: not within the step
	statefulSpread []time.Duration
}

func runWarmupScenario(t *testing.T, v warmupVariant) warmupRun {
	var run *harness.Run
	names := []string{"a1", "a2", "a3"}
	rep := harness.RunScenario(t, harness.Scenario{
		Name:          fmt.Sprintf("stateful app, %s on %s, %s protocol", v.name, v.broker, v.protocol),
		Broker:        v.broker,
		AppBuild:      harness.App44,
		GroupProtocol: v.protocol,
		Guarantee:     "exactly_once_v2",
		AppExtra:      append([]string{"app.store=rocksdb"}, v.appExtra...),
		Hold:          3 * time.Second,
		Route: func(ctx context.Context, r *harness.Run) (string, error) {
			if err := preloadChangelog(ctx, r.Broker.Bootstrap); err != nil {
				return "", err
			}
			if v.proxyID == "" {
				return r.Broker.Bootstrap, nil
			}
			ss := newStreamshift(ctx, r.T, r.Dir, r.Broker.Bootstrap, v.proxyID, append(append([]string{}, nativeTestSettings...), v.env...)...)
			r.T.Cleanup(ss.stop)
			return ss.listen, nil
		},
		Steps: []harness.Step{
			harness.StartInstances("a1"),
			harness.StartInstances("a2"),
			harness.StartInstances("a3"),
			harness.Kill9Instance("a3"),
			{Name: "check warm-ups", Do: func(ctx context.Context, r *harness.Run) error {
				run = r
				a1, err := r.App("a1")
				if err != nil {
					return err
				}
				var promoted []string
				for _, n := range []string{"a2", "a3"} {
					a, err := r.App(n)
					if err != nil {
						return err
					}
					promoted = append(promoted, warmedThenActive(a.Events(), a1.Events())...)
				}
				switch {
				case v.warmups && len(promoted) == 0:
					return errors.New("no task was warmed up on a2 or a3 while a1 ran it, then moved")
				case !v.warmups && len(promoted) > 0:
					return fmt.Errorf("no warm-ups configured, yet tasks %v were warmed up", promoted)
				}
				r.T.Logf("warmed up while a1 ran them, then active: %v", promoted)
				return nil
			}},
		},
	})
	wr := warmupRun{rep: rep, restored: make([]int64, len(rep.Steps)), statefulSpread: make([]time.Duration, len(rep.Steps))}
	events := map[string][]harness.Event{}
	for _, n := range names {
		a, err := run.App(n)
		if err != nil {
			t.Fatal(err)
		}
		events[n] = a.Events()
		for i, st := range rep.Steps {
			wr.restored[i] += changelogRecordsRead(events[n], st.At, stepEnd(rep, i))
		}
	}
	killed := map[string]time.Time{"a3": rep.Steps[3].At} // the steps above: kill -9 a3 is the fourth
	for i, st := range rep.Steps {
		wr.statefulSpread[i] = statefulSpreadAfter(events, killed, st.At, stepEnd(rep, i))
		t.Logf("%s, step %q: longest gap on one partition %s, balanced after %s, stateful tasks spread after %s, changelog records read %d (~%.1f MB)",
			v.name, st.Step, st.PartGap.Round(10*time.Millisecond), st.Balanced.Round(10*time.Millisecond), spreadString(wr.statefulSpread[i]),
			wr.restored[i], float64(wr.restored[i]*warmupRecordBytes)/1e6)
	}
	return wr
}

func stepEnd(rep *harness.Report, i int) time.Time {
	if i+1 < len(rep.Steps) {
		return rep.Steps[i+1].At
	}
	return time.Now()
}

// statefulSpreadAfter is how long after from the stateful active tasks
// (subtopology 1: the count store's) were each active on one live
// instance and spread evenly over the live ones (max − min ≤ 1), for good
// until to; -1 if they were not at to. The harness's "balanced" counts all
// tasks, so a group that balances with stateless tasks while its stateful
// ones stay put (classic's HighAvailabilityTaskAssignor, until its probing
// rebalance) is balanced there but not spread here.
func statefulSpreadAfter(events map[string][]harness.Event, killed map[string]time.Time, from, to time.Time) time.Duration {
	type change struct {
		at     time.Time
		app    string
		active []string
		gone   bool
	}
	var changes []change
	for app, evs := range events {
		for _, ev := range evs {
			if ev.Kind == "tasks" && ev.Time.Before(to) {
				var stateful []string
				for _, a := range ev.Active {
					if strings.HasPrefix(a, "1_") {
						stateful = append(stateful, a)
					}
				}
				changes = append(changes, change{at: ev.Time, app: app, active: stateful})
			}
		}
		if at, ok := killed[app]; ok && at.Before(to) {
			changes = append(changes, change{at: at, app: app, gone: true})
		}
	}
	slices.SortStableFunc(changes, func(a, b change) int { return a.at.Compare(b.at) })
	live := map[string][]string{}
	spread := func() bool {
		owners := map[string]int{}
		lo, hi := warmupPartitions+1, -1
		for _, tasks := range live {
			lo, hi = min(lo, len(tasks)), max(hi, len(tasks))
			for _, t := range tasks {
				owners[t]++
			}
		}
		if len(owners) != warmupPartitions || hi-lo > 1 {
			return false
		}
		for _, n := range owners {
			if n != 1 {
				return false
			}
		}
		return true
	}
	since, ok := from, false
	for _, c := range changes {
		if c.gone {
			delete(live, c.app)
		} else {
			live[c.app] = c.active
		}
		now := spread()
		if now && !ok {
			since = c.at
		}
		ok = now
	}
	if !ok {
		return -1
	}
	if since.Before(from) {
		return 0
	}
	return since.Sub(from)
}

func spreadString(d time.Duration) string {
	if d < 0 {
		return "not within the step"
	}
	return d.Round(10 * time.Millisecond).String()
}

// medianWarmupRuns is, per variant and step, the median of each measure
// over the rounds ("not within the step" counting as the longest).
func medianWarmupRuns(rounds [][]warmupRun) []warmupRun {
	out := make([]warmupRun, len(rounds[0]))
	for j := range out {
		first := rounds[0][j]
		steps := make([]harness.StepReport, len(first.rep.Steps))
		copy(steps, first.rep.Steps)
		m := warmupRun{rep: &harness.Report{Steps: steps}, restored: make([]int64, len(steps)), statefulSpread: make([]time.Duration, len(steps))}
		for i := range steps {
			var gap, bal, spread []time.Duration
			var read []int64
			for _, r := range rounds {
				if j >= len(r) || i >= len(r[j].rep.Steps) {
					continue
				}
				st := r[j].rep.Steps[i]
				gap, bal, read = append(gap, st.PartGap), append(bal, st.Balanced), append(read, r[j].restored[i])
				sp := r[j].statefulSpread[i]
				if sp < 0 {
					sp = time.Duration(math.MaxInt64)
				}
				spread = append(spread, sp)
			}
			steps[i].PartGap, steps[i].Balanced, m.restored[i] = medianOf(gap), medianOf(bal), medianOf(read)
			if m.statefulSpread[i] = medianOf(spread); m.statefulSpread[i] == time.Duration(math.MaxInt64) {
				m.statefulSpread[i] = -1
			}
		}
		out[j] = m
	}
	return out
}

func medianOf[T time.Duration | int64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// loadAverage is the machine's 1, 5 and 15 minute load averages, for the
// tables (the e2e machine is shared).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// warmedThenActive lists the tasks an instance held as a standby while the
// owner (from its events) ran them as active, and later as an active: the
// group has no standbys, so such a standby is a warm-up.
func warmedThenActive(events, owner []harness.Event) []string {
	ownerActive := func(at time.Time, task string) bool {
		var last []string
		for _, ev := range owner {
			if ev.Kind == "tasks" && !ev.Time.After(at) {
				last = ev.Active
			}
		}
		return slices.Contains(last, task)
	}
	warmed := map[string]bool{}
	var out []string
	for _, ev := range events {
		if ev.Kind != "tasks" {
			continue
		}
		for _, s := range ev.Standby {
			if ownerActive(ev.Time, s) {
				warmed[s] = true
			}
		}
		for _, a := range ev.Active {
			if warmed[a] && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// changelogRecordsRead sums what an instance read from changelogs in
// [from, to): active restores and standby (warm-up) loads.
func changelogRecordsRead(events []harness.Event, from, to time.Time) int64 {
	var n, loadedBefore, loadedAt int64
	for _, ev := range events {
		switch {
		case ev.Kind == "restore_end" && !ev.Time.Before(from) && ev.Time.Before(to):
			n += ev.Restored
		case ev.Kind == "standby_loaded" && ev.Time.Before(from):
			loadedBefore = ev.Count
		case ev.Kind == "standby_loaded" && ev.Time.Before(to):
			loadedAt = ev.Count
		}
	}
	if loadedAt > loadedBefore {
		n += loadedAt - loadedBefore
	}
	return n
}

func compareWarmupRuns(variants []warmupVariant, runs []warmupRun) string {
	var b strings.Builder
	b.WriteString("| step | variant | longest gap on one partition | balanced after | stateful tasks spread after | changelog records read |\n|---|---|---|---|---|---|\n")
	for i := range runs[0].rep.Steps {
		for j, r := range runs {
			if i >= len(r.rep.Steps) {
				continue
			}
			st := r.rep.Steps[i]
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d |\n", st.Step, variants[j].name,
				st.PartGap.Round(10*time.Millisecond), st.Balanced.Round(10*time.Millisecond), spreadString(r.statefulSpread[i]), r.restored[i])
		}
	}
	return b.String()
}

// preloadChangelog creates the store's changelog (as the coordinator would:
// 4 partitions, compacted) and fills it.
func preloadChangelog(ctx context.Context, bootstrap string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic(warmupChangelog),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	compact := "compact"
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, 4, 1, map[string]*string{"cleanup.policy": &compact}, warmupChangelog)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", warmupChangelog, err)
	}
	value := []byte(strings.Repeat("v", warmupValueBytes))
	errs := make(chan error, 1)
	for p := int32(0); p < 4; p++ {
		for i := range warmupPreload {
			r := &kgo.Record{Partition: p, Key: []byte(fmt.Sprintf("pre-%d-%d", p, i)), Value: value}
			cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			})
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	select {
	case err := <-errs:
		return fmt.Errorf("preload %s: %w", warmupChangelog, err)
	default:
		return nil
	}
}
