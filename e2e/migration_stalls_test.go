//go:build e2e

package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/streamshift/streamshift/capture"
	"github.com/streamshift/streamshift/e2e/harness"
)

// checkStallsAsAppsSaw (issue #39): `streamshift timeline --json` of the
// run's capture shows each stopped classic instance's tasks stalled from
// its stop until an instance runs them again, within a second of what the
// apps' own logs say: the stop between the old instance's "closing" and
// "closed" events (Kafka Streams closes its tasks, then its consumer's
// connections), the end at the first Kafka Streams "Handle new assignment
// with: New active tasks: [...]" of another instance that lists the task
// after the stop (the app's "tasks" event, polled from its thread
// metadata, comes up to seconds later on a loaded machine: logged beside
// it). classic: the stopped classic instances (c1 c2 c3).
func checkStallsAsAppsSaw(ctx context.Context, r *harness.Run, roll *migrationRoll, classic []string, captureFile string) error {
	out, err := exec.CommandContext(ctx, filepath.Join(r.Dir, "streamshift"), "timeline", captureFile, "--group", "e2e-count", "--json").Output()
	if err != nil && len(out) == 0 {
		return fmt.Errorf("streamshift timeline --json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "timeline.json"), out, 0o644); err != nil {
		return err
	}
	var tl capture.TimelineJSON
	if err := json.NewDecoder(bytes.NewReader(out)).Decode(&tl); err != nil {
		return fmt.Errorf("timeline --json: %w", err)
	}
	if tl.Version != 2 {
		return fmt.Errorf("timeline --json version %d, want 2", tl.Version)
	}
	var all []harness.Event
	roll.mu.Lock()
	names := slices.Clone(roll.names)
	ends := map[string]time.Time{}
	for k, v := range roll.ends {
		ends[k] = v
	}
	roll.mu.Unlock()
	for _, name := range names {
		a, err := r.App(name)
		if err != nil {
			return err
		}
		all = append(all, a.Events()...)
	}
	slices.SortFunc(all, func(a, b harness.Event) int { return a.Time.Compare(b.Time) })
	var assigned []assignmentLog
	for _, name := range names {
		a, err := r.App(name)
		if err != nil {
			return err
		}
		got, err := readAssignmentLog(name, filepath.Join(a.Dir, "app.log"))
		if err != nil {
			return err
		}
		assigned = append(assigned, got...)
	}
	slices.SortFunc(assigned, func(a, b assignmentLog) int { return a.at.Compare(b.at) })
	const slack = time.Second
	checked := 0
	for _, old := range classic {
		stopCalled, ok := ends[old]
		if !ok {
			continue
		}
		var tasks []string
		var closing, closed time.Time
		for _, ev := range all {
			switch {
			case ev.App != old:
			case ev.Kind == "tasks" && ev.Time.Before(stopCalled):
				tasks = ev.Active
			case ev.Kind == "closing" && closing.IsZero():
				closing = ev.Time
			case ev.Kind == "closed" && closed.IsZero():
				closed = ev.Time
			}
		}
		if closing.IsZero() || closed.IsZero() {
			return fmt.Errorf("%s: no closing/closed event in its log", old)
		}
		for _, task := range tasks {
			var runs, listed time.Time
			for _, ev := range all {
				if ev.Kind == "tasks" && ev.App != old && ev.Time.After(closing) && slices.Contains(ev.Active, task) {
					listed = ev.Time
					break
				}
			}
			for _, a := range assigned {
				if a.app != old && a.at.After(closing) && slices.Contains(a.active, task) {
					runs = a.at
					break
				}
			}
			var st *capture.StallJSON
			for i := range tl.Stalls {
				s := &tl.Stalls[i]
				if s.Task == task && !s.From.Before(closing.Add(-slack)) && !s.From.After(closed.Add(slack)) {
					st = s
					break
				}
			}
			if st == nil {
				return fmt.Errorf("%s task %s: no stall from its stop (closing %s, closed %s) in timeline.json; stalls: %s",
					old, task, closing.Format(time.TimeOnly+".000"), closed.Format(time.TimeOnly+".000"), stallList(tl.Stalls))
			}
			r.T.Logf("%s task %s: stalled %s..%s (%s, %s); app logs: closing %s, closed %s (stall from %+.3fs after closed), assigned again %s (stall end %+.3fs), listed running %s",
				old, task, st.From.Format(time.TimeOnly+".000"), st.To.Format(time.TimeOnly+".000"), time.Duration(st.Ms)*time.Millisecond, st.Why,
				closing.Format(time.TimeOnly+".000"), closed.Format(time.TimeOnly+".000"), st.From.Sub(closed).Seconds(),
				runs.Format(time.TimeOnly+".000"), st.To.Sub(runs).Seconds(), listed.Format(time.TimeOnly+".000"))
			if runs.IsZero() {
				return fmt.Errorf("%s task %s: no instance's log has a new assignment with it after the stop", old, task)
			}
			if d := st.To.Sub(runs); d < -slack || d > slack {
				return fmt.Errorf("%s task %s: stall ends %s, the apps' logs say it ran again at %s (%+.3fs)", old, task,
					st.To.Format(time.TimeOnly+".000"), runs.Format(time.TimeOnly+".000"), d.Seconds())
			}
			checked++
		}
	}
	if checked == 0 {
		return fmt.Errorf("no stopped classic instance's task checked")
	}
	r.T.Logf("timeline --json: %d stalls, %d ms task-time, longest %d ms; %d stalled tasks of stopped classic instances match the apps' logs within %s",
		tl.Summary.Stalls, tl.Summary.StallMs, tl.Summary.LongestStallM, checked, slack)
	for _, s := range tl.RollingSteps {
		var ts []string
		for _, t := range s.Tasks {
			ts = append(ts, fmt.Sprintf("%s %dms", t.Task, t.Ms))
		}
		r.T.Logf("rolling step: went %s at +%dms (%s), came %s; no running owner: %s", s.Went, s.WentMs, s.Why, s.Came, strings.Join(ts, ", "))
	}
	return nil
}

func stallList(stalls []capture.StallJSON) string {
	var out []string
	for _, s := range stalls {
		out = append(out, fmt.Sprintf("%s %s..%s", s.Task, s.From.Format(time.TimeOnly+".000"), s.To.Format(time.TimeOnly+".000")))
	}
	return strings.Join(out, "; ")
}

// assignmentLog is a Kafka Streams "Handle new assignment with: New active
// tasks: [...]" of an app's log (TaskManager, at INFO: when the stream
// thread takes its assignment).
type assignmentLog struct {
	app    string
	at     time.Time
	active []string
}

// Kafka Streams 4.4's log4j2 layout writes 2026-12-07T01:10:35,475, the
// older apps' log4j 1 layout 2026-12-07 01:10:35,475.
var assignmentLine = regexp.MustCompile(`^\[(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d,\d{3})\] INFO .*Handle new assignment with:`)
var activeTasksLine = regexp.MustCompile(`^\s+New active tasks: \[(.*)\]`)

func readAssignmentLog(app, file string) ([]assignmentLog, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []assignmentLog
	var at time.Time
	for _, line := range strings.Split(string(b), "\n") {
		if m := assignmentLine.FindStringSubmatch(line); m != nil {
			// The JVM logs in the machine's zone, as Go reads it.
			at, err = time.ParseInLocation("2006-01-02T15:04:05,000", m[1]+"T"+m[2], time.Local)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			continue
		}
		if m := activeTasksLine.FindStringSubmatch(line); m != nil && !at.IsZero() {
			var tasks []string
			for _, t := range strings.Split(m[1], ",") {
				if t = strings.TrimSpace(t); t != "" {
					tasks = append(tasks, t)
				}
			}
			out = append(out, assignmentLog{app, at, tasks})
			at = time.Time{}
		}
	}
	return out, nil
}
