package streams

import (
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
)

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
