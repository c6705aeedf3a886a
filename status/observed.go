package status

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
)

// A classic Kafka Streams group streamshift observes (the migration on,
// the group still classic on the broker, its requests forwarded through
// here) is listed from its first classic join (issue #39): its members as
// the broker describes them (DescribeGroups), their tasks decoded from the
// classic assignment (AssignmentInfo), and their active tasks' lag measured
// from the group's committed offsets against the input partitions' end
// offsets.

// Upstream is what the status page reads of the upstream cluster besides
// end offsets; nil: observed classic groups are not listed, and lags are
// only what members report.
type Upstream interface {
	// DescribeClassic is DescribeGroups of ids at their coordinators.
	DescribeClassic(ctx context.Context, ids []string) ([]kmsg.DescribeGroupsResponseGroup, error)
	// Committed is the group's committed offsets (OffsetFetch), by topic
	// and partition.
	Committed(ctx context.Context, group string) (map[string]map[int32]int64, error)
}

// observedLister is the coordinator's list of the classic groups it
// observes and does not serve (coordinator.ObservedClassicGroups).
type observedLister interface {
	ObservedClassicGroups(done func([]string))
}

// whyRebalancing is why a member of an observed group has no tasks.
const whyRebalancing = "no assignment: the group is rebalancing on the broker"

// observedNote is how the page marks an observed group.
const observedNote = "observed, classic on the broker"

// observedGroups describes the observed classic groups (all, or the one id)
// that are Kafka Streams groups on the upstream, skipping served ones.
func (s *Server) observedGroups(ctx context.Context, id string, served map[string]bool) ([]Group, error) {
	ol, ok := s.coord.(observedLister)
	if !ok || s.upstream == nil {
		return nil, nil
	}
	ch := make(chan []string, 1)
	ol.ObservedClassicGroups(func(ids []string) { ch <- ids })
	var ids []string
	select {
	case all := <-ch:
		for _, g := range all {
			if !served[g] && (id == "" || g == id) {
				ids = append(ids, g)
			}
		}
	case <-ctx.Done():
		return nil, fmt.Errorf("observed classic groups: %w", ctx.Err())
	}
	if id == "" {
		s.streamsGroups.keep(ids)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	described, err := s.upstream.DescribeClassic(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("describe the observed classic groups %v: %w", ids, err)
	}
	var out []Group
	for _, d := range described {
		if !s.streamsGroups.is(d) {
			continue // not (or not yet seen as) a classic Kafka Streams group
		}
		g := Group{ID: d.Group, Observed: observedNote, State: d.State, Members: []Member{}}
		members := make([]observedMember, 0, len(d.Members))
		var topics []string
		for _, m := range d.Members {
			om := decodeObserved(m)
			members = append(members, om)
			for _, tps := range om.active {
				for _, tp := range tps {
					topics = append(topics, tp.Topic)
				}
			}
		}
		slices.Sort(topics)
		topics = slices.Compact(topics)
		in := s.measureInputs(ctx, d.Group, topics)
		for _, om := range members {
			g.Members = append(g.Members, om.member(in))
		}
		slices.SortFunc(g.Members, func(a, b Member) int { return strings.Compare(a.Label+a.MemberID, b.Label+b.MemberID) })
		out = append(out, g)
	}
	return out, nil
}

// measureInputs are the committed offsets of group and the end offsets of
// topics, for measured lags; an error of either is kept as the reason none
// is measured.
type measureInputs struct {
	committed map[string]map[int32]int64
	ends      map[string]map[int32]int64
	err       error
}

func (s *Server) measureInputs(ctx context.Context, group string, topics []string) measureInputs {
	var in measureInputs
	if s.upstream == nil || s.endOffsets == nil || len(topics) == 0 {
		in.err = fmt.Errorf("no upstream to read offsets from")
		return in
	}
	if in.committed, in.err = s.upstream.Committed(ctx, group); in.err != nil {
		return in
	}
	in.ends, in.err = s.endOffsets(ctx, topics)
	return in
}

// measure is the lag of a task reading partitions tps: the sum of each
// partition's end offset minus the group's committed offset, or why it is
// not measured.
func (in measureInputs) measure(tps []classicstreams.TopicPartition) (int64, string) {
	if in.err != nil {
		return 0, whyNotMeasured + ": " + in.err.Error()
	}
	if len(tps) == 0 {
		return 0, whyNoInputs
	}
	var sum int64
	for _, tp := range tps {
		end, ok := in.ends[tp.Topic][tp.Partition]
		if !ok {
			return 0, whyNotMeasured + ": no end offset of " + fmt.Sprintf("%s-%d", tp.Topic, tp.Partition)
		}
		committed, ok := in.committed[tp.Topic][tp.Partition]
		if !ok || committed < 0 {
			return 0, whyNoCommit + " on " + fmt.Sprintf("%s-%d", tp.Topic, tp.Partition)
		}
		sum += max(end-committed, 0)
	}
	return sum, ""
}

// observedMember is one member of an observed classic group, decoded.
type observedMember struct {
	m kmsg.DescribeGroupsResponseGroupMember
	// processID is from its SubscriptionInfo, else its client id.
	processID string
	// active are its active tasks with the input partitions each reads
	// (AssignmentInfo's active tasks are in the order of the assigned
	// partitions); standby its standby tasks.
	active  map[string][]classicstreams.TopicPartition
	order   []string
	standby []string
	// why says what could not be decoded.
	why string
}

func decodeObserved(m kmsg.DescribeGroupsResponseGroupMember) observedMember {
	om := observedMember{m: m, active: map[string][]classicstreams.TopicPartition{}}
	if sub, err := classicstreams.DecodeConsumerSubscription(m.ProtocolMetadata); err == nil {
		if info, err := classicstreams.DecodeSubscriptionInfo(sub.UserData); err == nil {
			om.processID = info.ProcessID.String()
		}
	}
	if om.processID == "" {
		if p := streamsClientID.FindStringSubmatch(m.ClientID); p != nil {
			om.processID = p[2]
		}
	}
	if len(m.MemberAssignment) == 0 {
		// The broker describes assignments only while the group is Stable.
		om.why = whyRebalancing
		return om
	}
	a, err := classicstreams.DecodeConsumerAssignment(m.MemberAssignment)
	if err != nil {
		om.why = "assignment not decoded: " + err.Error()
		return om
	}
	info, err := classicstreams.DecodeAssignmentInfo(a.UserData)
	if err != nil {
		if len(a.AssignedPartitions) > 0 {
			om.why = "assignment info not decoded: " + err.Error()
		}
		return om
	}
	for i, t := range info.ActiveTasks {
		name := t.String()
		if _, ok := om.active[name]; !ok {
			om.order = append(om.order, name)
		}
		if i < len(a.AssignedPartitions) {
			om.active[name] = append(om.active[name], a.AssignedPartitions[i])
		}
	}
	for _, t := range info.StandbyTasks {
		om.standby = append(om.standby, t.Task.String())
	}
	slices.Sort(om.order)
	slices.Sort(om.standby)
	return om
}

// member is the page's member, its active tasks' lags measured.
func (om observedMember) member(in measureInputs) Member {
	m := om.m
	mm := Member{MemberID: m.MemberID, Protocol: "classic", MemberEpoch: -1, ProcessID: om.processID, ClientID: m.ClientID,
		ClientHost: m.ClientHost, InstanceID: m.InstanceID, Active: om.order, Standby: om.standby, Warmup: []string{}, Tasks: []TaskLag{}}
	if mm.Active == nil {
		mm.Active = []string{}
	}
	if mm.Standby == nil {
		mm.Standby = []string{}
	}
	mm.Label = memberLabel(m.ClientHost, om.processID, m.ClientID)
	var sum int64
	known := false
	for _, name := range om.order {
		tl := TaskLag{Task: name, Kind: "active"}
		if l, why := in.measure(om.active[name]); why != "" {
			tl.Why = why
		} else {
			tl.Lag, tl.Source = &l, sourceMeasured
			sum += l
			known = true
		}
		mm.Tasks = append(mm.Tasks, tl)
	}
	for _, name := range om.standby {
		mm.Tasks = append(mm.Tasks, TaskLag{Task: name, Kind: "standby", Why: whyClassicChangelog})
	}
	switch {
	case known:
		mm.Lag, mm.LagSource = &sum, sourceMeasured
	case om.why != "":
		mm.LagWhy = om.why
	default:
		mm.LagWhy = lagWhy(mm.Tasks)
	}
	return mm
}

// streamsClientID matches a Kafka Streams consumer's client id
// <application.id>-<process UUID>-StreamThread-N-consumer: the process UUID
// and the thread number.
var streamsClientID = regexp.MustCompile(`^(.*)-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-StreamThread-([0-9]+)-(?:consumer|restore-consumer)$`)

// memberLabel names a member as the capture's timeline does:
// host/processUUID[:8] thread N, the process from its process id, else its
// client id; "" when neither names a process.
func memberLabel(clientHost, processID, clientID string) string {
	thread := ""
	if p := streamsClientID.FindStringSubmatch(clientID); p != nil {
		if processID == "" {
			processID = p[2]
		}
		thread = p[3]
	}
	if processID == "" {
		return ""
	}
	host := strings.TrimPrefix(clientHost, "/")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	label := host + "/" + processID[:min(8, len(processID))]
	if thread != "" {
		label += " thread " + thread
	}
	return label
}

// kafkaStreamsGroups remembers which observed classic groups were seen as
// Kafka Streams groups: the broker names a group's protocol ("stream")
// only while it is Stable, and a group must not vanish from the page
// during each rebalance. Groups no longer observed are forgotten.
type kafkaStreamsGroups struct {
	mu   sync.Mutex
	seen map[string]bool
}

// is reports whether d is a classic Kafka Streams group: its protocol is
// "stream", or it was while Stable before and its protocol type is still
// "consumer" (a rebalance).
func (k *kafkaStreamsGroups) is(d kmsg.DescribeGroupsResponseGroup) bool {
	if d.ErrorCode != 0 || d.ProtocolType != classicstreams.ProtocolType || d.State == "Dead" {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if d.Protocol == classicstreams.StreamsProtocolName {
		if k.seen == nil {
			k.seen = map[string]bool{}
		}
		k.seen[d.Group] = true
		return true
	}
	return d.Protocol == "" && k.seen[d.Group]
}

// keep forgets the groups not in observed.
func (k *kafkaStreamsGroups) keep(observed []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for g := range k.seen {
		if !slices.Contains(observed, g) {
			delete(k.seen, g)
		}
	}
}
