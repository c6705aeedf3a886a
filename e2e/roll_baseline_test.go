//go:build e2e

package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamshift/streamshift/e2e/harness"
)

// The roll runs set side by side in the comparison (issue #28): the online
// migration through streamshift, and the same instances rolled straight on
// Kafka by its own protocols.
const (
	rollViaStreamshift = "through streamshift on Kafka 3.9 (replacement by identity)"
	rollBrokerClassic  = "straight on Kafka 3.9: classic rolling bounce"
	rollBrokerStreams  = "straight on Kafka 4.4: streams rolling bounce"
)

var rollRunOrder = []string{rollViaStreamshift, rollBrokerClassic, rollBrokerStreams}

// rollRunTests: the test that runs each.
var rollRunTests = map[string]string{
	rollViaStreamshift: "TestStreamsProxyOnlineMigration",
	rollBrokerClassic:  "TestBrokerRollBaselineClassic",
	rollBrokerStreams:  "TestBrokerRollBaselineStreams",
}

// rollComparisonFile is the comparison's own file in e2e/out; the
// migration's report.md gets the same table appended.
const rollComparisonFile = "roll-comparison.md"

// rollRun is one finished roll run of this test process.
type rollRun struct {
	rep   *harness.Report
	ended time.Time
	load  string // the machine's load average when it ended
}

// rollRuns holds the roll runs finished in this process: the runs are
// parallel tests, each on its own broker, so whichever finishes last writes
// the complete table (each one writes what has finished so far).
var rollRuns = struct {
	sync.Mutex
	m map[string]rollRun
}{m: map[string]rollRun{}}

// recordRolls adds a finished roll run and writes the comparison of the
// runs finished so far to e2e/out/roll-comparison.md and, once the
// migration through streamshift is among them, to the end of its
// report.md.
func recordRolls(t testing.TB, key string, rep *harness.Report) {
	t.Helper()
	var load string
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		load = strings.Join(f[:min(3, len(f))], " ")
	}
	rollRuns.Lock()
	defer rollRuns.Unlock()
	rollRuns.m[key] = rollRun{rep: rep, ended: time.Now(), load: load}
	table := rollComparisonMarkdown(rollRuns.m)
	if err := os.WriteFile(filepath.Join(harness.OutBase(), rollComparisonFile), []byte(table), 0o644); err != nil {
		t.Errorf("roll comparison: %v", err)
	}
	if via, ok := rollRuns.m[rollViaStreamshift]; ok {
		if err := os.WriteFile(filepath.Join(via.rep.Dir, "report.md"), []byte(via.rep.Markdown()+"\n"+table), 0o644); err != nil {
			t.Errorf("roll comparison: %v", err)
		}
	}
	t.Logf("roll comparison so far (e2e/out/%s):\n%s", rollComparisonFile, table)
}

// rollSteps are a report's roll steps (stop one instance, start its
// successor), named "roll <old> to <build> <protocol> as <new>".
func rollSteps(rep *harness.Report) []harness.StepReport {
	var out []harness.StepReport
	for _, s := range rep.Steps {
		if strings.HasPrefix(s.Step, "roll ") {
			out = append(out, s)
		}
	}
	return out
}

// rollComparisonMarkdown: per roll step of each run, from the stop of the
// old instance to every task running on one live instance, to the group
// balanced, and the longest time without output on one output partition;
// then the range of each per run and direction.
func rollComparisonMarkdown(runs map[string]rollRun) string {
	var b strings.Builder
	b.WriteString("## Roll steps through streamshift beside Kafka's own rolls (issue #28)\n\n")
	b.WriteString("The same count app, input and exactly-once in each run, each successor on its predecessor's state\n")
	b.WriteString("directory (RocksDB store), classic sessions 30 s, streams sessions 10 s. Times from the stop of the\n")
	b.WriteString("old instance: to every task running on one live instance, to the group balanced; gap: the\n")
	b.WriteString("longest time without output on one output partition.\n\n")
	b.WriteString("| run | step | all running | balanced | gap on one partition |\n|---|---|---|---|---|\n")
	type span struct{ lo, hi [3]time.Duration }
	var keys []string
	spans := map[string]*span{}
	for _, run := range rollRunOrder {
		r, ok := runs[run]
		if !ok {
			fmt.Fprintf(&b, "| %s | not finished in this run of the tests (%s) | | | |\n", run, rollRunTests[run])
			continue
		}
		for _, s := range rollSteps(r.rep) {
			fmt.Fprintf(&b, "| %s | %s | %.2f s | %.2f s | %.2f s |\n", run, s.Step, s.AllRunning.Seconds(), s.Balanced.Seconds(), s.PartGap.Seconds())
			key := run + " | " + rollDirection(s.Step)
			sp := spans[key]
			if sp == nil {
				sp = &span{lo: [3]time.Duration{s.AllRunning, s.Balanced, s.PartGap}, hi: [3]time.Duration{s.AllRunning, s.Balanced, s.PartGap}}
				spans[key] = sp
				keys = append(keys, key)
			}
			for i, d := range []time.Duration{s.AllRunning, s.Balanced, s.PartGap} {
				sp.lo[i], sp.hi[i] = min(sp.lo[i], d), max(sp.hi[i], d)
			}
		}
	}
	b.WriteString("\n| run | steps | all running | balanced | gap on one partition |\n|---|---|---|---|---|\n")
	for _, k := range keys {
		sp := spans[k]
		fmt.Fprintf(&b, "| %s | %.1f–%.1f s | %.1f–%.1f s | %.1f–%.1f s |\n", k,
			sp.lo[0].Seconds(), sp.hi[0].Seconds(), sp.lo[1].Seconds(), sp.hi[1].Seconds(), sp.lo[2].Seconds(), sp.hi[2].Seconds())
	}
	b.WriteString("\n| run | ended | duration | machine load (1, 5, 15 min) | problems (a baseline's outcome is Kafka's) |\n|---|---|---|---|---|\n")
	for _, run := range rollRunOrder {
		if r, ok := runs[run]; ok {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", run, r.ended.UTC().Format("2006-01-02 15:04 UTC"), r.rep.Duration.Round(time.Second), r.load, tableCell(strings.Join(r.rep.Problems, "; ")))
		}
	}
	return b.String()
}

// tableCell keeps text on one line of a markdown table: a problem's
// message may span lines (an output check lists each key it missed).
func tableCell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", "\\|")
}

// rollDirection names a roll step's direction from its name: "roll c1 to
// 4.4 streams as s1" from classic (c*) or streams (s*) to the protocol.
func rollDirection(step string) string {
	f := strings.Fields(step)
	if len(f) < 5 {
		return step
	}
	from := map[byte]string{'c': "classic", 's': "streams"}[f[1][0]]
	return from + " → " + f[4]
}

// checkRollsMeasured: what a baseline must show, whatever Kafka's outcome:
// each of its n roll steps' times were measured.
func checkRollsMeasured(t *testing.T, rep *harness.Report, n int) {
	t.Helper()
	rolls := rollSteps(rep)
	if len(rolls) != n {
		t.Errorf("%d roll steps measured, want %d (problems: %q)", len(rolls), n, rep.Problems)
	}
	for _, s := range rolls {
		if s.AllRunning <= 0 || s.Balanced <= 0 || s.PartGap <= 0 {
			t.Errorf("step %s: all running %s, balanced %s, gap %s: not measured", s.Step, s.AllRunning, s.Balanced, s.PartGap)
		}
	}
}

// TestBrokerRollBaselineClassic: baseline (a) of the online migration's roll
// steps. The same three instances as TestStreamsProxyOnlineMigration
// (kafka-streams 4.4, 2.8 and 3.6, classic, exactly-once, RocksDB, 30 s
// sessions) rolled straight on Kafka 3.9, which has no streams protocol: a
// classic rolling bounce to 4.4 classic, each successor on its
// predecessor's state directory. A classic Kafka Streams instance does not
// leave its group on close, so each step waits for its session. It
// measures: Kafka's own errors (the 2.8 client has hit
// InvalidProducerEpochException here under load) are recorded in the
// report, and the test asserts only that each step was measured.
func TestBrokerRollBaselineClassic(t *testing.T) {
	harness.NeedBench(t)
	t.Parallel()
	roll := &migrationRoll{ends: map[string]time.Time{}, keepState: true}
	rep := harness.RunScenario(t, harness.Scenario{
		Name:          "the online migration's instances rolled straight on Kafka 3.9: classic to 4.4 classic",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App44,
		GroupProtocol: "classic",
		Guarantee:     "exactly_once_v2",
		AppExtra:      rollAppExtra,
		Hold:          5 * time.Second,
		MeasureOnly:   true,
		Steps: []harness.Step{
			roll.start("c1", harness.App44, "classic"),
			roll.start("c2", harness.App28, "classic"),
			roll.start("c3", harness.App36, "classic"),
			roll.replace("c1", "c4", "classic"),
			roll.replace("c2", "c5", "classic"),
			roll.replace("c3", "c6", "classic"),
		},
	})
	checkRollsMeasured(t, rep, 3)
	recordRolls(t, rollBrokerClassic, rep)
}

// TestBrokerRollBaselineStreams: baseline (b), the streams protocol on Kafka
// itself. Three 4.4 instances on group.protocol=streams on a Kafka 4.4
// broker (the streams group's session 10 s, no initial delay, as
// streamshift's in the migration), exactly-once, RocksDB, rolled one at a
// time to 4.4 streams on their predecessors' state directories. A 4.4
// streams instance leaves its group on close. Measures like
// TestBrokerRollBaselineClassic.
func TestBrokerRollBaselineStreams(t *testing.T) {
	harness.NeedBench(t)
	t.Parallel()
	roll := &migrationRoll{ends: map[string]time.Time{}, keepState: true}
	rep := harness.RunScenario(t, harness.Scenario{
		Name:          "the same roll on Kafka 4.4's streams protocol: 4.4 streams to 4.4 streams",
		Broker:        harness.Kafka44,
		AppBuild:      harness.App44,
		GroupProtocol: "streams",
		Guarantee:     "exactly_once_v2",
		AppExtra:      rollAppExtra,
		Hold:          5 * time.Second,
		MeasureOnly:   true,
		Steps: []harness.Step{
			roll.start("s1", harness.App44, "streams"),
			roll.start("s2", harness.App44, "streams"),
			roll.start("s3", harness.App44, "streams"),
			roll.replace("s1", "s4", "streams"),
			roll.replace("s2", "s5", "streams"),
			roll.replace("s3", "s6", "streams"),
		},
	})
	checkRollsMeasured(t, rep, 3)
	recordRolls(t, rollBrokerStreams, rep)
}
