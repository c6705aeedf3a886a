package streams

import (
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
)

// OffsetReport is what a member last said of its state's progress, for the
// status page: when, and for a classic member the task offset sums of its
// SubscriptionInfo (a streams member's offsets are its TaskOffsets).
type OffsetReport struct {
	// At is when the member last reported offsets: a streams heartbeat
	// with TaskOffsets or TaskEndOffsets, a classic JoinGroup; zero: never.
	At time.Time
	// ClassicSums are a classic member's task offset sums as its
	// SubscriptionInfo gives them: a changelog offset sum per task with
	// local state, classicstreams.OffsetSumRunningActive for a running
	// active task. Tasks of named topologies are never here (such a join
	// is refused).
	ClassicSums []kmsg.TaskOffset
}

// classicOffsetReport reads the task offset sums of a classic member's
// SubscriptionInfo; a future (undecodable) one reports nothing but the time.
func classicOffsetReport(info *classicstreams.SubscriptionInfo, now time.Time) OffsetReport {
	r := OffsetReport{At: now}
	if info == nil || info.Future {
		return r
	}
	for _, s := range info.OffsetSums() {
		if s.Task.NamedTopology != "" {
			continue
		}
		r.ClassicSums = append(r.ClassicSums, kmsg.TaskOffset{SubtopologyID: strconv.Itoa(int(s.Task.Subtopology)), Partition: s.Task.Partition, Offset: s.OffsetSum})
	}
	return r
}

// OffsetReports are the groups' members' offset reports by member id (a
// copy: the caller reads them off the group's executor).
func OffsetReports(g *Group) map[string]OffsetReport {
	out := make(map[string]OffsetReport, len(g.Members))
	for id, m := range g.Members {
		r := m.Report
		r.ClassicSums = append([]kmsg.TaskOffset(nil), r.ClassicSums...)
		out[id] = r
	}
	return out
}
