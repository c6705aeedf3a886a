package harness

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Overlap is a time during which one task was active on two instances.
type Overlap struct {
	Task string
	A, B string
	From time.Time
	Dur  time.Duration
}

func (o Overlap) String() string {
	return fmt.Sprintf("task %s active on %s and %s for %s from %s", o.Task, o.A, o.B, o.Dur.Round(time.Millisecond), o.From.Format("15:04:05.000"))
}

type activeSpan struct {
	inst       string
	start, end time.Time
}

// ActiveOverlaps replays the instances' "tasks" events (each instance's
// active set holds from one report to its next) and returns every period in
// which a task was active on two instances, longest first. ends gives the
// time an instance stopped counting (killed or stopped); its last set holds
// until then, else until now. Closing instances end at their "closing".
// A task also ends on an instance at that instance's "task_closed" for it
// (Kafka Streams' "task [1_2] Closed clean"): from 3.0 on a stream thread
// renews the metadata the apps poll only when it turns RUNNING
// (StreamThread.setState), so after a cooperative revocation an instance
// keeps reporting the task it closed until its thread runs again, a second
// or more under load, while the task's next owner already reports it.
// The apps report their task sets by polling (every 100 ms), so overlaps
// of that order are reporting noise: callers judge with a tolerance.
func ActiveOverlaps(events []Event, ends map[string]time.Time, now time.Time) []Overlap {
	byInst := map[string][]Event{}
	closes := map[string][]time.Time{} // instance + " " + task -> its closes
	for _, ev := range events {
		switch {
		case ev.Kind == "tasks" || ev.Kind == "closing":
			byInst[ev.App] = append(byInst[ev.App], ev)
		case ev.Kind == "task_closed" && !strings.Contains(ev.Raw, "standby-task ["):
			closes[ev.App+" "+ev.Task] = append(closes[ev.App+" "+ev.Task], ev.Time)
		}
	}
	// closedAt is the first close of task on inst in (from, to), else to.
	closedAt := func(inst, task string, from, to time.Time) time.Time {
		for _, c := range closes[inst+" "+task] {
			if c.After(from) && c.Before(to) {
				to = c
			}
		}
		return to
	}
	spans := map[string][]activeSpan{}
	for inst, evs := range byInst {
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time.Before(evs[j].Time) })
		end := now
		if e, ok := ends[inst]; ok {
			end = e
		}
		for i, ev := range evs {
			if ev.Kind != "tasks" || !ev.Time.Before(end) {
				continue
			}
			to := end
			if i+1 < len(evs) && evs[i+1].Time.Before(to) {
				to = evs[i+1].Time
			}
			for _, t := range ev.Active {
				spans[t] = append(spans[t], activeSpan{inst, ev.Time, closedAt(inst, t, ev.Time, to)})
			}
		}
	}
	var out []Overlap
	for task, ss := range spans {
		for i := range ss {
			for j := i + 1; j < len(ss); j++ {
				a, b := ss[i], ss[j]
				if a.inst == b.inst {
					continue
				}
				from, to := later(a.start, b.start), earlier(a.end, b.end)
				if to.After(from) {
					out = append(out, Overlap{Task: task, A: a.inst, B: b.inst, From: from, Dur: to.Sub(from)})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dur > out[j].Dur })
	return out
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// IQHost is one Streams client in an "iq" event: the topic partitions
// ("topic-p") of its active and standby tasks.
type IQHost struct {
	Active, Standby []string
}

// ParseIQ reads an "iq" event (CountApp with application.server): host:port
// → partitions.
func ParseIQ(ev Event) (map[string]IQHost, error) {
	var w struct {
		Hosts []string `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(ev.Raw), &w); err != nil {
		return nil, fmt.Errorf("iq event of %s: %w", ev.App, err)
	}
	out := map[string]IQHost{}
	for _, h := range w.Hosts {
		parts := strings.Split(h, "|")
		if len(parts) != 3 {
			return nil, fmt.Errorf("iq event of %s: bad host entry %q", ev.App, h)
		}
		out[parts[0]] = IQHost{Active: splitList(parts[1]), Standby: splitList(parts[2])}
	}
	return out, nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// TaskPartitions maps CountApp task ids to the topic partitions IQ reports
// for them: subtopology i's task i_p reads sources[i] partition p. Sorted.
func TaskPartitions(tasks []string, sources ...string) ([]string, error) {
	var out []string
	for _, t := range tasks {
		var sub, p int
		if _, err := fmt.Sscanf(t, "%d_%d", &sub, &p); err != nil || sub < 0 || sub >= len(sources) {
			return nil, fmt.Errorf("task %q: not one of %d subtopologies", t, len(sources))
		}
		out = append(out, fmt.Sprintf("%s-%d", sources[sub], p))
	}
	sort.Strings(out)
	return out, nil
}
