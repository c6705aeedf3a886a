package status

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// EndOffsets reads the end offsets of topics' partitions from the upstream
// cluster (ListOffsets, latest), by topic and partition.
type EndOffsets func(ctx context.Context, topics []string) (map[string]map[int32]int64, error)

// offsetReporter is the coordinator's read of its members' offset reports
// (when each last reported, a classic member's task offset sums).
type offsetReporter interface {
	OffsetReports(id string, done func(map[string]streams.OffsetReport))
}

// Why a lag is not known, as the page's tooltips and legend say it.
const (
	whyStateless = "stateless task: no changelog"
	whyNoOffsets = "member reports no offsets"
	whyNoEnd     = "changelog end offset not known"
	whyNoTasks   = "no tasks"
	// Measured lags (committed offsets against end offsets).
	whyNotMeasured      = "not measured"
	whyNoInputs         = "no input partitions"
	whyNoCommit         = "no committed offset"
	whyClassicChangelog = "changelog lag not known while classic on the broker"
)

// Where a lag comes from, as the page says it: streamshift measured it now
// (the group's committed offsets against the partitions' end offsets), or
// a member reported it (its task offsets, as old as the report).
const (
	sourceMeasured = "measured"
	sourceReported = "reported"
)

// TaskLag is one of a member's tasks with its lag: the changelog records
// its local state is behind. Lag is nil when nobody reports it; Why says
// why then.
type TaskLag struct {
	Task string `json:"task"`
	// Kind is active, standby or warmup.
	Kind string `json:"kind"`
	Lag  *int64 `json:"lag,omitempty"`
	Why  string `json:"why,omitempty"`
	// Source is "measured" for an active task's input lag streamshift
	// measured (committed offsets against end offsets: records not yet
	// processed), "reported" for a changelog lag from a member's offset
	// report (Age old), "" for a lag assumed 0 (an active task whose owner
	// writes its changelog).
	Source string `json:"source,omitempty"`
	Age    string `json:"age,omitempty"`
}

// TasksOf are the member's tasks of one kind, for the page.
func (m Member) TasksOf(kind string) []TaskLag {
	var out []TaskLag
	for _, t := range m.Tasks {
		if t.Kind == kind {
			out = append(out, t)
		}
	}
	return out
}

// lagInputs is what the lags of one group are computed from besides its
// description: the members' offset reports, the changelogs' end offsets
// read from the upstream (or why they could not be), and the time.
type lagInputs struct {
	reports  map[string]streams.OffsetReport
	fetched  map[string]map[int32]int64
	fetchErr error
	now      time.Time
	// measure are the group's committed offsets and its source topics'
	// end offsets; sources the source topics of each subtopology.
	measure measureInputs
	sources map[string][]string
}

// lagInputs reads the offset reports of the described groups and the end
// offsets of all their changelogs, in one ListOffsets.
func (s *Server) lagInputs(ctx context.Context, described []kmsg.StreamsGroupDescribeResponseGroup) map[string]lagInputs {
	now := time.Now()
	var topics []string
	sources := map[string]map[string][]string{}
	for _, d := range described {
		if d.Topology == nil {
			continue
		}
		sources[d.Group] = map[string][]string{}
		for _, st := range d.Topology.Subtopologies {
			for _, c := range st.StateChangelogTopics {
				topics = append(topics, c.Topic)
			}
			src := slices.Clone(st.SourceTopics)
			for _, r := range st.RepartitionSourceTopics {
				src = append(src, r.Topic)
			}
			sources[d.Group][st.SubtopologyID] = src
			if s.upstream != nil {
				topics = append(topics, src...)
			}
		}
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	var fetched map[string]map[int32]int64
	var fetchErr error
	if len(topics) > 0 {
		if s.endOffsets == nil {
			fetchErr = fmt.Errorf("no upstream to read them from")
		} else {
			fetched, fetchErr = s.endOffsets(ctx, topics)
		}
	}
	out := map[string]lagInputs{}
	rep, _ := s.coord.(offsetReporter)
	for _, d := range described {
		in := lagInputs{fetched: fetched, fetchErr: fetchErr, now: now, sources: sources[d.Group]}
		in.measure.ends, in.measure.err = fetched, fetchErr
		if s.upstream == nil {
			in.measure.err = fmt.Errorf("no upstream to read offsets from")
		} else if fetchErr == nil && len(in.sources) > 0 {
			in.measure.committed, in.measure.err = s.upstream.Committed(ctx, d.Group)
		}
		if rep != nil {
			ch := make(chan map[string]streams.OffsetReport, 1)
			rep.OffsetReports(d.Group, func(r map[string]streams.OffsetReport) { ch <- r })
			select {
			case in.reports = <-ch:
			case <-ctx.Done():
			}
		}
		out[d.Group] = in
	}
	return out
}

// taskKey is a task as TaskOffsets name it.
type taskKey struct {
	st string
	p  int32
}

// taskEnds is where a task's changelog end comes from, one piece for both
// protocols: the largest end any member reported (a streams group's active
// owner reports it with its offsets), else the sum of the end offsets of the
// task's changelog partitions read from the upstream (the same sum a member
// reports, and what a classic member's offset sum is compared with).
type taskEnds struct {
	reported map[taskKey]int64
	// changelogs are the subtopologies' changelog topics; nil without a
	// topology (then only reported ends are known).
	changelogs map[string][]string
	fetched    map[string]map[int32]int64
	fetchErr   error
}

func newTaskEnds(d kmsg.StreamsGroupDescribeResponseGroup, fetched map[string]map[int32]int64, fetchErr error) taskEnds {
	e := taskEnds{reported: map[taskKey]int64{}, fetched: fetched, fetchErr: fetchErr}
	for _, m := range d.Members {
		for _, o := range m.TaskEndOffsets {
			if o.Offset < 0 || o.Offset == math.MaxInt64 {
				continue // unknown, or an overflowed sum
			}
			k := taskKey{o.SubtopologyID, o.Partition}
			if cur, ok := e.reported[k]; !ok || o.Offset > cur {
				e.reported[k] = o.Offset
			}
		}
	}
	if d.Topology != nil {
		e.changelogs = map[string][]string{}
		for _, st := range d.Topology.Subtopologies {
			e.changelogs[st.SubtopologyID] = []string{}
			for _, c := range st.StateChangelogTopics {
				e.changelogs[st.SubtopologyID] = append(e.changelogs[st.SubtopologyID], c.Topic)
			}
		}
	}
	return e
}

// end is task k's changelog end offset sum, or why it is not known.
func (e taskEnds) end(k taskKey) (int64, string) {
	if end, ok := e.reported[k]; ok {
		return end, ""
	}
	topics, ok := e.changelogs[k.st]
	if !ok {
		return 0, whyNoEnd
	}
	if len(topics) == 0 {
		return 0, whyStateless
	}
	if e.fetchErr != nil {
		return 0, whyNoEnd + ": " + e.fetchErr.Error()
	}
	var sum int64
	for _, t := range topics {
		end, ok := e.fetched[t][k.p]
		if !ok {
			return 0, whyNoEnd
		}
		sum += end
	}
	return sum, ""
}

// setLag sets the member's task lags, their sum and the report's age. A
// task's lag is its changelog end minus the member's offset for it: a
// streams member's TaskOffsets, a classic member's task offset sum. A
// running active task of a classic member (its sum is the "running" mark)
// and an active task of a streams member that reports no offset of its own
// (its owner writes the changelog) lag 0; any other task without an offset
// of the member's is not known.
//
// An active task whose source partitions streamshift can measure (the
// group's committed offsets against their end offsets, in) shows that
// instead: what the task has not processed yet, as of now, where a report
// is as old as the member's last one (every task.offset.interval.ms, 60 s
// by default) and grows stale while the task runs.
func (mm *Member) setLag(m kmsg.StreamsGroupDescribeResponseGroupMember, rep streams.OffsetReport, ends taskEnds, in lagInputs) {
	now := in.now
	age := ""
	if !rep.At.IsZero() {
		age = now.Sub(rep.At).Round(time.Second).String()
	}
	measured, reported := false, false
	own := map[taskKey]int64{}
	offsets := m.TaskOffsets
	if m.IsClassic {
		offsets = rep.ClassicSums
	}
	for _, o := range offsets {
		own[taskKey{o.SubtopologyID, o.Partition}] = o.Offset
	}
	mm.Tasks = []TaskLag{}
	var sum int64
	known := false
	add := func(ts []kmsg.TaskIDs, kind string) {
		var tasks []TaskLag
		defer func() {
			slices.SortFunc(tasks, func(a, b TaskLag) int { return strings.Compare(a.Task, b.Task) })
			mm.Tasks = append(mm.Tasks, tasks...)
		}()
		for _, t := range ts {
			for _, p := range t.Partitions {
				k := taskKey{t.SubtopologyID, p}
				tl := TaskLag{Task: fmt.Sprintf("%s_%d", k.st, k.p), Kind: kind}
				if kind == "active" {
					if l, why := in.measure.measure(sourcePartitions(in.sources[k.st], k.p)); why == "" && in.sources != nil {
						tl.Lag, tl.Source = &l, sourceMeasured
						measured = true
						sum += l
						known = true
						tasks = append(tasks, tl)
						continue
					}
				}
				end, why := ends.end(k)
				off, has := own[k]
				switch {
				case why != "":
					tl.Why = why
				case has && off >= 0:
					l := max(end-off, 0)
					tl.Lag, tl.Source, tl.Age = &l, sourceReported, age
					reported = true
				case kind == "active" && (has && off == classicstreams.OffsetSumRunningActive || !has && !m.IsClassic):
					l := int64(0)
					tl.Lag = &l
					if has {
						tl.Source, tl.Age = sourceReported, age
					}
				default:
					tl.Why = whyNoOffsets
				}
				if tl.Lag != nil {
					sum += *tl.Lag
					known = true
				}
				tasks = append(tasks, tl)
			}
		}
	}
	add(m.Assignment.ActiveTasks, "active")
	add(m.Assignment.StandbyTasks, "standby")
	add(m.Assignment.WarmupTasks, "warmup")
	if !rep.At.IsZero() {
		at := rep.At.UTC()
		mm.LagReportedAt = &at
		mm.LagAge = now.Sub(rep.At).Round(time.Second).String()
	}
	if known {
		mm.Lag = &sum
		switch {
		case reported:
			mm.LagSource = sourceReported
		case measured:
			mm.LagSource = sourceMeasured
		}
		return
	}
	mm.LagWhy = lagWhy(mm.Tasks)
}

// sourcePartitions are partition p of each source topic: the partitions
// task <subtopology>_p reads.
func sourcePartitions(topics []string, p int32) []classicstreams.TopicPartition {
	out := make([]classicstreams.TopicPartition, len(topics))
	for i, t := range topics {
		out[i] = classicstreams.TopicPartition{Topic: t, Partition: p}
	}
	return out
}

// lagWhy says why no task of a member has a known lag: that all are
// stateless, or the first other reason.
func lagWhy(ts []TaskLag) string {
	if len(ts) == 0 {
		return whyNoTasks
	}
	for _, t := range ts {
		if t.Why != whyStateless {
			return t.Why
		}
	}
	return whyStateless
}
