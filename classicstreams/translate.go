package classicstreams

import (
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
)

// TaskTopology is what the translation needs of a topology: the input topics
// (source and repartition source topics, global topics excluded) of each
// subtopology, keyed by Kafka Streams' integer subtopology id. A topic is
// read by at most one subtopology, as Kafka Streams' topology builder
// enforces, so a partition belongs to at most one task.
type TaskTopology struct {
	inputs  map[int32][]string
	byTopic map[string]int32
}

// NewTaskTopology builds a TaskTopology; it fails if a topic is an input of
// two subtopologies.
func NewTaskTopology(inputs map[int32][]string) (*TaskTopology, error) {
	t := &TaskTopology{inputs: make(map[int32][]string, len(inputs)), byTopic: make(map[string]int32)}
	for sub, topics := range inputs {
		ts := slices.Clone(topics)
		slices.Sort(ts)
		ts = slices.Compact(ts)
		t.inputs[sub] = ts
		for _, topic := range ts {
			if other, dup := t.byTopic[topic]; dup {
				return nil, fmt.Errorf("topic %q is an input of subtopologies %d and %d", topic, other, sub)
			}
			t.byTopic[topic] = sub
		}
	}
	return t, nil
}

// NewTaskTopologyFromStreams builds a TaskTopology from streams-protocol
// subtopology ids ("0", "1", ...) to their source plus repartition source
// topics.
func NewTaskTopologyFromStreams(inputs map[string][]string) (*TaskTopology, error) {
	m := make(map[int32][]string, len(inputs))
	for id, topics := range inputs {
		t, err := TaskFromStreams(id, 0)
		if err != nil {
			return nil, err
		}
		m[t.Subtopology] = topics
	}
	return NewTaskTopology(m)
}

// TaskOf returns the task that reads tp, and false if no subtopology reads
// its topic.
func (t *TaskTopology) TaskOf(tp TopicPartition) (TaskID, bool) {
	sub, ok := t.byTopic[tp.Topic]
	if !ok {
		return TaskID{}, false
	}
	return TaskID{Subtopology: sub, Partition: tp.Partition}, true
}

// PartitionCounts reports a topic's partition count and whether it exists
// (the shape of topology.PartitionCounts).
type PartitionCounts func(topic string) (int32, bool)

// PartitionsOf returns the input partitions of a task, sorted: partition p
// of every input topic that has more than p partitions (Kafka Streams'
// PartitionGrouper). ok is false if the task's subtopology is unknown.
func (t *TaskTopology) PartitionsOf(task TaskID, counts PartitionCounts) (tps []TopicPartition, ok bool) {
	topics, ok := t.inputs[task.Subtopology]
	if !ok || task.NamedTopology != "" {
		return nil, false
	}
	for _, topic := range topics {
		if n, exists := counts(topic); exists && task.Partition < n {
			tps = append(tps, TopicPartition{Topic: topic, Partition: task.Partition})
		}
	}
	return tps, true
}

// OwnedActiveTasks maps a member's owned partitions (ConsumerProtocol
// OwnedPartitions) to the active tasks it owns, sorted and deduplicated:
// the leader's first source of previous active tasks, and the only one for
// stateless and restoring tasks. Partitions no subtopology reads are
// returned in unknown.
func OwnedActiveTasks(owned []TopicPartition, topo *TaskTopology) (active []TaskID, unknown []TopicPartition) {
	for _, tp := range owned {
		task, ok := topo.TaskOf(tp)
		if !ok {
			unknown = append(unknown, tp)
			continue
		}
		active = append(active, task)
	}
	sortTasks(active)
	return slices.Compact(active), unknown
}

// OwnedTasks is a classic member's current tasks as Kafka Streams' leader
// derives them (ClientState.initializePrevTasks).
type OwnedTasks struct {
	// Active: tasks of owned partitions, then every task whose offset sum
	// is OffsetSumRunningActive.
	Active []TaskID
	// Standby: every other task with local state (offset sum >= 0, or
	// OffsetSumUnknown from a v1-v6 standby list). A sum >= 0 may only be
	// state left on disk, so prefer what was last assigned.
	Standby []TaskID
	// UnknownPartitions are owned partitions no subtopology reads.
	UnknownPartitions []TopicPartition
}

// ClassifyOwnedTasks derives a member's active and standby tasks from its
// owned partitions and its SubscriptionInfo. Named-topology tasks are an
// error: the streams protocol cannot serve them.
func ClassifyOwnedTasks(sub *SubscriptionInfo, owned []TopicPartition, topo *TaskTopology) (OwnedTasks, error) {
	var out OwnedTasks
	if named := sub.NamedTopologyTasks(); len(named) > 0 {
		return out, fmt.Errorf("member reports named-topology tasks %v, which the streams protocol does not support", named)
	}
	out.Active, out.UnknownPartitions = OwnedActiveTasks(owned, topo)
	running, stateful := TasksFromOffsetSums(sub.OffsetSums())
	for _, t := range running {
		if _, found := slices.BinarySearchFunc(out.Active, t, cmpTask); !found {
			out.Active = append(out.Active, t)
		}
	}
	sortTasks(out.Active)
	for _, t := range stateful {
		if _, found := slices.BinarySearchFunc(out.Active, t, cmpTask); !found {
			out.Standby = append(out.Standby, t)
		}
	}
	return out, nil
}

// TasksFromOffsetSums splits offset sums into running stateful actives
// (OffsetSumRunningActive) and every other task with local state, each sorted
// and deduplicated.
func TasksFromOffsetSums(sums []TaskOffsetSum) (runningActive, stateHolding []TaskID) {
	for _, s := range sums {
		if s.OffsetSum == OffsetSumRunningActive {
			runningActive = append(runningActive, s.Task)
		} else {
			stateHolding = append(stateHolding, s.Task)
		}
	}
	sortTasks(runningActive)
	sortTasks(stateHolding)
	return slices.Compact(runningActive), slices.Compact(stateHolding)
}

// SplitOffsetSums gives the v1-v6 prevTasks / standbyTasks lists for offset
// sums, as Kafka Streams does when it encodes an old version.
func SplitOffsetSums(sums []TaskOffsetSum) (prev, standby []TaskID) {
	return TasksFromOffsetSums(sums)
}

// AlignActiveTasks builds what a classic member needs for its active tasks:
// the partitions to put in ConsumerProtocolAssignment, sorted by (topic,
// partition), and the AssignmentInfo active task list with one entry per
// partition, activeTasks[i] owning partitions[i]. Kafka Streams requires
// exactly this (StreamsPartitionAssignor.onAssignment). Partitions of topics
// that do not exist are left out, as the classic assignor does. A task of an
// unknown subtopology is an error: the client would build it wrongly.
func AlignActiveTasks(tasks []TaskID, topo *TaskTopology, counts PartitionCounts) (partitions []TopicPartition, activeTasks []TaskID, err error) {
	for _, task := range tasks {
		tps, ok := topo.PartitionsOf(task, counts)
		if !ok {
			return nil, nil, fmt.Errorf("active task %s: unknown subtopology", task)
		}
		partitions = append(partitions, tps...)
	}
	sortPartitions(partitions)
	partitions = slices.Compact(partitions)
	activeTasks = make([]TaskID, len(partitions))
	for i, tp := range partitions {
		activeTasks[i], _ = topo.TaskOf(tp)
	}
	return partitions, activeTasks, nil
}

// StandbyAssignment builds the AssignmentInfo standby map: each task with
// its input partitions, in task order.
func StandbyAssignment(tasks []TaskID, topo *TaskTopology, counts PartitionCounts) ([]StandbyTask, error) {
	sorted := slices.Clone(tasks)
	sortTasks(sorted)
	sorted = slices.Compact(sorted)
	out := make([]StandbyTask, 0, len(sorted))
	for _, task := range sorted {
		tps, ok := topo.PartitionsOf(task, counts)
		if !ok {
			return nil, fmt.Errorf("standby task %s: unknown subtopology", task)
		}
		out = append(out, StandbyTask{Task: task, Partitions: tps})
	}
	return out, nil
}

// EndpointPartitions is one entry of the streams group's
// PartitionsByUserEndpoint: an application.server endpoint with the active
// and standby partitions of the members behind it.
type EndpointPartitions struct {
	Endpoint HostInfo
	Active   []TopicPartition
	Standby  []TopicPartition
}

// HostMaps builds the AssignmentInfo IQ host maps from the streams group's
// per-endpoint partitions: entries with the same endpoint merge, partitions
// are deduplicated and sorted, and every endpoint in also (the classic
// members' own endpoints) gets an entry even with no partitions, because a
// Streams client that misses its own endpoint rebalances forever
// (verifyHostInfo). Every active partition of the group must be in
// endpoints: Kafka Streams derives partition counts for key routing from it.
func HostMaps(endpoints []EndpointPartitions, also []HostInfo) (active, standby []HostPartitions) {
	type sets struct{ active, standby []TopicPartition }
	by := make(map[HostInfo]*sets)
	var order []HostInfo
	get := func(h HostInfo) *sets {
		s, ok := by[h]
		if !ok {
			s = &sets{}
			by[h] = s
			order = append(order, h)
		}
		return s
	}
	for _, e := range endpoints {
		s := get(e.Endpoint)
		s.active = append(s.active, e.Active...)
		s.standby = append(s.standby, e.Standby...)
	}
	for _, h := range also {
		get(h)
	}
	slices.SortFunc(order, func(a, b HostInfo) int {
		if c := strings.Compare(a.Host, b.Host); c != 0 {
			return c
		}
		return int(a.Port) - int(b.Port)
	})
	// Like Kafka's leader (populatePartitionsByHostMaps), every endpoint is
	// in both maps, possibly with no partitions.
	active = make([]HostPartitions, 0, len(order))
	standby = make([]HostPartitions, 0, len(order))
	for _, h := range order {
		s := by[h]
		sortPartitions(s.active)
		sortPartitions(s.standby)
		active = append(active, HostPartitions{HostInfo: h, Partitions: slices.Compact(s.active)})
		standby = append(standby, HostPartitions{HostInfo: h, Partitions: slices.Compact(s.standby)})
	}
	return active, standby
}

// ParseEndpoint parses an application.server value "host:port" (an IPv6
// host may be bracketed) into the streams protocol's endpoint shape.
func ParseEndpoint(s string) (HostInfo, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return HostInfo{}, fmt.Errorf("endpoint %q: %w", s, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return HostInfo{}, fmt.Errorf("endpoint %q: port: %w", s, err)
	}
	return HostInfo{Host: host, Port: int32(p)}, nil
}

// VersionReply is the version pair of an AssignmentInfo for one member.
type VersionReply struct {
	Version                  int32
	CommonlySupportedVersion int32
	// Future: the member used a version above LatestSupportedVersion. It
	// must get FutureMemberAssignment (no tasks, no partitions) and will
	// re-subscribe at LatestSupportedVersion at once.
	Future bool
}

// ReplyVersion applies the version rule to a member that subscribed with
// SubscriptionInfo version used and latest supported version latest:
// answer at the member's own used version (a higher version kills the
// client's thread, a lower one makes it rejoin) with commonly supported =
// min(latest, LatestSupportedVersion), never above what the member
// supports. A commonly above used moves the member to the higher version
// with one extra rebalance, as Kafka's own leader does once every member
// supports it. v1 and v2 carry no commonly supported version.
func ReplyVersion(used, latest int32) VersionReply {
	if used > LatestSupportedVersion {
		return VersionReply{Version: LatestSupportedVersion, CommonlySupportedVersion: LatestSupportedVersion, Future: true}
	}
	if used < minCommonlyVersion {
		return VersionReply{Version: used, CommonlySupportedVersion: UnknownVersion}
	}
	commonly := min(max(latest, used), LatestSupportedVersion)
	return VersionReply{Version: used, CommonlySupportedVersion: commonly}
}

// FutureMemberAssignment is the AssignmentInfo for a member whose
// subscription version is above LatestSupportedVersion: version and
// commonly supported LatestSupportedVersion, nothing assigned. It goes with
// an empty partition list.
func FutureMemberAssignment() AssignmentInfo {
	return AssignmentInfo{
		Version:                  LatestSupportedVersion,
		CommonlySupportedVersion: LatestSupportedVersion,
		NextRebalanceMs:          math.MaxInt64,
	}
}

// ErrorAssignment is an AssignorError reply (e.g. AssignorErrorShutdownRequested)
// at the member's versions, with nothing assigned. It needs version 4+.
func ErrorAssignment(reply VersionReply, errCode int32) (AssignmentInfo, error) {
	if reply.Version < minErrCodeVersion {
		return AssignmentInfo{}, fmt.Errorf("assignor error %d cannot be sent at AssignmentInfo version %d (needs 4+)", errCode, reply.Version)
	}
	return AssignmentInfo{
		Version:                  reply.Version,
		CommonlySupportedVersion: reply.CommonlySupportedVersion,
		ErrCode:                  errCode,
		NextRebalanceMs:          math.MaxInt64,
	}, nil
}
