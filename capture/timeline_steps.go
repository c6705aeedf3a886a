package capture

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// RollingStep is an instance gone (all its threads' members gone, see
// timeline_stalls.go) and the instance that came next: the same process
// back or a new one. Tasks are how long each task had no running owner
// from Went until the next step (or the capture's end).
type RollingStep struct {
	// WentLane and CameLane are a lane of each instance (the label's
	// source); CameLane is nil when none came by the capture's end.
	WentLane, CameLane *Lane
	Went, Came         time.Time
	Why                string
	Tasks              []TaskNoOwner
}

// TaskNoOwner is a task's time with no running owner in a step.
type TaskNoOwner struct {
	Task string
	Dur  time.Duration
}

// instanceKey groups a lane with the other threads of its process.
func (ln *Lane) instanceKey() string {
	if ln.ProcessID != "" {
		return ln.ProcessID
	}
	return ln.ClientID
}

// InstanceLabel is the lane's instance as a person knows it (its label
// without the thread).
func (ln *Lane) InstanceLabel() string {
	if ln.Thread == "" {
		return ln.Label
	}
	return strings.TrimSuffix(ln.Label, " thread "+ln.Thread)
}

// computeSteps finds the rolling steps; lanes' gone spans and tasks'
// states must be computed.
func (t *Timeline) computeSteps() {
	t.Steps = nil
	type inst struct {
		lanes []*Lane
		first time.Time
	}
	insts := map[string]*inst{}
	var keys []string
	for _, ln := range t.Lanes {
		if len(ln.talk.reqs) == 0 {
			continue
		}
		k := ln.instanceKey()
		in := insts[k]
		if in == nil {
			in = &inst{}
			insts[k] = in
			keys = append(keys, k)
		}
		in.lanes = append(in.lanes, ln)
		if f := ln.talk.reqs[0].From; in.first.IsZero() || f.Before(in.first) {
			in.first = f
		}
	}
	// An instance is gone while every lane it had by then is.
	goneAt := func(in *inst, at time.Time) (bool, string) {
		why, any := "", false
		for _, ln := range in.lanes {
			if ln.talk.reqs[0].From.After(at) {
				continue
			}
			g := ln.goneAt(at)
			if g == nil {
				return false, ""
			}
			any, why = true, g.Why
		}
		return any, why
	}
	type went struct {
		key      string
		from, to time.Time
		why      string
	}
	var wents []went
	for _, k := range keys {
		in := insts[k]
		var cuts []time.Time
		for _, ln := range in.lanes {
			for _, g := range ln.Gone {
				cuts = append(cuts, g.From, g.To)
			}
		}
		sort.Slice(cuts, func(i, j int) bool { return cuts[i].Before(cuts[j]) })
		cuts = slices.CompactFunc(cuts, time.Time.Equal)
		var cur *went
		for _, c := range cuts {
			gone, why := goneAt(in, c)
			switch {
			case gone && cur == nil:
				cur = &went{key: k, from: c, why: why}
			case !gone && cur != nil:
				cur.to = c
				wents = append(wents, *cur)
				cur = nil
			}
		}
		if cur != nil && cur.from.Before(t.End) {
			cur.to = t.End
			wents = append(wents, *cur)
		}
	}
	sort.Slice(wents, func(i, j int) bool { return wents[i].from.Before(wents[j].from) })
	for i, w := range wents {
		s := RollingStep{WentLane: insts[w.key].lanes[0], Went: w.from, Why: w.why}
		// The next instance to come: this one back, or a new one.
		if w.to.Before(t.End) {
			s.CameLane, s.Came = insts[w.key].lanes[0], w.to
		}
		for _, k := range keys {
			if f := insts[k].first; k != w.key && f.After(w.from) && (s.Came.IsZero() || f.Before(s.Came)) {
				s.CameLane, s.Came = insts[k].lanes[0], f
			}
		}
		until := t.End
		if i+1 < len(wents) {
			until = wents[i+1].from
		}
		for _, th := range t.Tasks {
			var d time.Duration
			for _, in := range th.states {
				if in.state == "running" || in.state == "twice" {
					continue
				}
				from, to := maxTime(in.from, w.from), minTime(in.to, until)
				if to.After(from) {
					d += to.Sub(from)
				}
			}
			if d > 0 {
				s.Tasks = append(s.Tasks, TaskNoOwner{th.Task, d})
			}
		}
		t.Steps = append(t.Steps, s)
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
