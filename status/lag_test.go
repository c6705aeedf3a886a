package status

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestLagFromTheActiveOwnersEnd: a standby's lag is the changelog end its
// active owner reported minus the standby's own offset (it reports no end
// itself, as Kafka Streams does); the active owner, with no offset of its
// own, lags 0; a member with no report has no lag (shown "–").
func TestLagFromTheActiveOwnersEnd(t *testing.T) {
	tasks := func(ps ...int32) []kmsg.TaskIDs {
		return []kmsg.TaskIDs{{SubtopologyID: "0", Partitions: ps}}
	}
	active := kmsg.NewStreamsGroupDescribeResponseGroupMember()
	active.MemberID = "active"
	active.Assignment.ActiveTasks = tasks(0, 1)
	active.TaskEndOffsets = []kmsg.TaskOffset{{SubtopologyID: "0", Partition: 0, Offset: 100}, {SubtopologyID: "0", Partition: 1, Offset: 50}}
	standby := kmsg.NewStreamsGroupDescribeResponseGroupMember()
	standby.MemberID = "standby"
	standby.Assignment.StandbyTasks = tasks(0)
	standby.Assignment.WarmupTasks = tasks(1)
	standby.TaskOffsets = []kmsg.TaskOffset{{SubtopologyID: "0", Partition: 0, Offset: 60}, {SubtopologyID: "0", Partition: 1, Offset: 45}}
	silent := kmsg.NewStreamsGroupDescribeResponseGroupMember()
	silent.MemberID = "silent"
	silent.Assignment.StandbyTasks = tasks(2)
	d := kmsg.NewStreamsGroupDescribeResponseGroup()
	d.Group = "g"
	d.Members = append(d.Members, active, standby, silent)
	want := map[string]*int64{"active": ptr(0), "standby": ptr(45), "silent": nil}
	for _, m := range fromDescribed(d).Members {
		w := want[m.MemberID]
		if (w == nil) != (m.Lag == nil) || w != nil && *w != *m.Lag {
			t.Errorf("%s: lag %v, want %v", m.MemberID, deref(m.Lag), deref(w))
		}
	}
}

func ptr(v int64) *int64 { return &v }

func deref(p *int64) any {
	if p == nil {
		return "none"
	}
	return *p
}
