package status

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
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
	for _, m := range fromDescribed(d, lagInputs{}).Members {
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

// TestClassicLagFromOffsetSums: a classic member's task lag is its changelog
// partitions' end offsets (read from the upstream) minus the task offset sum
// of its SubscriptionInfo; a running active task (-2) lags 0; a task with no
// sum (or -1) and a stateless task have none, each with its reason; the
// member's lag is the sum of the known ones, with the report's age. Without
// the upstream's end offsets every stateful task says so.
func TestClassicLagFromOffsetSums(t *testing.T) {
	d := kmsg.NewStreamsGroupDescribeResponseGroup()
	d.Group = "g"
	d.Topology = &kmsg.StreamsGroupDescribeResponseGroupTopology{Subtopologies: []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{
		{SubtopologyID: "0", StateChangelogTopics: []kmsg.TopicInfo{{Topic: "a-changelog"}, {Topic: "b-changelog"}}},
		{SubtopologyID: "1"},
	}}
	c := kmsg.NewStreamsGroupDescribeResponseGroupMember()
	c.MemberID = "c"
	c.IsClassic = true
	c.Assignment.ActiveTasks = []kmsg.TaskIDs{{SubtopologyID: "0", Partitions: []int32{0, 3}}, {SubtopologyID: "1", Partitions: []int32{0}}}
	c.Assignment.StandbyTasks = []kmsg.TaskIDs{{SubtopologyID: "0", Partitions: []int32{1, 2}}}
	// A streams-protocol field a classic member never fills: ignored.
	c.TaskOffsets = []kmsg.TaskOffset{{SubtopologyID: "0", Partition: 1, Offset: 0}}
	d.Members = append(d.Members, c)
	now := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	in := lagInputs{
		reports: map[string]streams.OffsetReport{"c": {At: now.Add(-30 * time.Second), ClassicSums: []kmsg.TaskOffset{
			{SubtopologyID: "0", Partition: 0, Offset: classicstreams.OffsetSumRunningActive},
			{SubtopologyID: "0", Partition: 1, Offset: 70},
			{SubtopologyID: "0", Partition: 2, Offset: -1},
		}}},
		fetched: map[string]map[int32]int64{"a-changelog": {0: 40, 1: 60, 2: 5, 3: 1}, "b-changelog": {0: 10, 1: 20, 2: 5, 3: 1}},
		now:     now,
	}
	m := fromDescribed(d, in).Members[0]
	want := map[string]string{"0_0": "0", "0_3": whyNoOffsets, "1_0": whyStateless, "0_1": "10", "0_2": whyNoOffsets}
	for _, tl := range m.Tasks {
		got := tl.Why
		if tl.Lag != nil {
			got = strconv.FormatInt(*tl.Lag, 10)
		}
		if got != want[tl.Task] {
			t.Errorf("task %s (%s): %q, want %q", tl.Task, tl.Kind, got, want[tl.Task])
		}
	}
	if len(m.Tasks) != len(want) || m.Lag == nil || *m.Lag != 10 || m.LagAge != "30s" || m.LagReportedAt == nil {
		t.Fatalf("member %+v lag %v", m, deref(m.Lag))
	}

	in.fetched, in.fetchErr = nil, errors.New("upstream down")
	m = fromDescribed(d, in).Members[0]
	if m.Lag != nil || m.LagWhy != whyNoEnd+": upstream down" {
		t.Fatalf("without end offsets: lag %v why %q", deref(m.Lag), m.LagWhy)
	}
}

// TestActiveLagMeasuredNotReported: a running active task's lag is
// measured (its source partitions' end offsets minus the group's committed
// offsets, as of now), not the changelog lag of the member's last offset
// report, which grows stale between reports (every 60 s by default); a
// standby's lag is the report's, with its age, and the member's sum says it
// holds a report. Without committed offsets the active task falls back to
// the report.
func TestActiveLagMeasuredNotReported(t *testing.T) {
	d := kmsg.NewStreamsGroupDescribeResponseGroup()
	d.Group = "g"
	d.Topology = &kmsg.StreamsGroupDescribeResponseGroupTopology{Subtopologies: []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{
		{SubtopologyID: "0", SourceTopics: []string{"input"}, StateChangelogTopics: []kmsg.TopicInfo{{Topic: "g-store-changelog"}}},
	}}
	m := kmsg.NewStreamsGroupDescribeResponseGroupMember()
	m.MemberID = "s"
	m.Assignment.ActiveTasks = []kmsg.TaskIDs{{SubtopologyID: "0", Partitions: []int32{0}}}
	m.Assignment.StandbyTasks = []kmsg.TaskIDs{{SubtopologyID: "0", Partitions: []int32{1}}}
	// The report of 18 s ago: the active task's changelog was then 696
	// behind the end read now; the standby 5 behind.
	m.TaskOffsets = []kmsg.TaskOffset{{SubtopologyID: "0", Partition: 0, Offset: 304}, {SubtopologyID: "0", Partition: 1, Offset: 95}}
	d.Members = append(d.Members, m)
	now := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	ends := map[string]map[int32]int64{"g-store-changelog": {0: 1000, 1: 100}, "input": {0: 500, 1: 50}}
	in := lagInputs{
		reports: map[string]streams.OffsetReport{"s": {At: now.Add(-18 * time.Second)}},
		fetched: ends, now: now, sources: map[string][]string{"0": {"input"}},
		measure: measureInputs{committed: map[string]map[int32]int64{"input": {0: 498}}, ends: ends},
	}
	got := func(mm Member) string {
		var parts []string
		for _, tl := range mm.Tasks {
			s := tl.Task + "=" + tl.Why
			if tl.Lag != nil {
				s = tl.Task + "=" + strconv.FormatInt(*tl.Lag, 10) + " " + tl.Source + " " + tl.Age
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ", ") + " | " + strconv.FormatInt(*mm.Lag, 10) + " " + mm.LagSource
	}
	if g, want := got(fromDescribed(d, in).Members[0]), "0_0=2 measured , 0_1=5 reported 18s | 7 reported"; g != want {
		t.Errorf("with committed offsets: %s, want %s", g, want)
	}
	in.measure = measureInputs{err: errors.New("upstream down")}
	if g, want := got(fromDescribed(d, in).Members[0]), "0_0=696 reported 18s, 0_1=5 reported 18s | 701 reported"; g != want {
		t.Errorf("without: %s, want %s", g, want)
	}
}
