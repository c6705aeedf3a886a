package streams

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// Topology description statuses of StreamsGroupDescribe v1.
const (
	topologyDescriptionNotRequested int8 = 0
	topologyDescriptionNotStored    int8 = 1
)

func DescribeError(id string, err *CoordError) kmsg.StreamsGroupDescribeResponseGroup {
	g := kmsg.NewStreamsGroupDescribeResponseGroup()
	g.Group = id
	g.ErrorCode = err.Code.Code
	msg := err.Msg
	g.ErrorMessage = &msg
	return g
}

// describeTopology reports the configured subtopologies (with decided
// partition counts) when the topology is ready, else the stored one.
func describeTopology(t *topology.Topology, cfgd *configuredTopology) *kmsg.StreamsGroupDescribeResponseGroupTopology {
	out := &kmsg.StreamsGroupDescribeResponseGroupTopology{Epoch: t.Epoch, Subtopologies: []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{}}
	add := func(id string, sources, sinks []string, changelogs, repartitions []kmsg.TopicInfo) {
		out.Subtopologies = append(out.Subtopologies, kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{
			SubtopologyID: id, SourceTopics: append([]string{}, sources...), RepartitionSinkTopics: append([]string{}, sinks...),
			StateChangelogTopics: changelogs, RepartitionSourceTopics: repartitions,
		})
	}
	if cfgd.IsReady() {
		for _, s := range cfgd.ConfiguredSubtopologies {
			add(s.ID, s.ExternalSourceTopics, s.RepartitionSinkTopics, internalTopicInfos(s.StateChangelogTopicInfos), internalTopicInfos(s.RepartitionSourceTopicInfos))
		}
		return out
	}
	for _, s := range t.Subtopologies {
		add(s.ID, s.SourceTopics, s.RepartitionSinkTopics, topicInfos(s.StateChangelogTopics), topicInfos(s.RepartitionSourceTopics))
	}
	return out
}

func internalTopicInfos(in []topology.InternalTopic) []kmsg.TopicInfo {
	out := make([]kmsg.TopicInfo, 0, len(in))
	for _, t := range in {
		out = append(out, kmsg.TopicInfo{Topic: t.Name, NumPartitions: t.Partitions, ReplicationFactor: t.ReplicationFactor, Configs: topicConfigs(t.Configs)})
	}
	return out
}

func topicInfos(in []topology.TopicInfo) []kmsg.TopicInfo {
	out := make([]kmsg.TopicInfo, 0, len(in))
	for _, t := range in {
		out = append(out, kmsg.TopicInfo{Topic: t.Name, NumPartitions: t.Partitions, ReplicationFactor: t.ReplicationFactor, Configs: topicConfigs(t.Configs)})
	}
	return out
}

func topicConfigs(in []topology.Config) []kmsg.TopicInfoConfig {
	out := make([]kmsg.TopicInfoConfig, 0, len(in))
	for _, c := range in {
		out = append(out, kmsg.TopicInfoConfig{Key: c.Key, Value: c.Value})
	}
	return out
}

func describeMember(g *Group, m *Member) kmsg.StreamsGroupDescribeResponseGroupMember {
	out := kmsg.NewStreamsGroupDescribeResponseGroupMember()
	out.MemberID = m.ID
	cur := m.CurrentAssignment()
	out.MemberEpoch = cur.MemberEpoch
	if meta := m.Meta; meta != nil {
		if meta.InstanceID != "" {
			v := meta.InstanceID
			out.InstanceID = &v
		}
		if meta.RackID != "" {
			v := meta.RackID
			out.RackID = &v
		}
		out.ClientID = meta.ClientID
		out.ClientHost = meta.ClientHost
		out.TopologyEpoch = meta.TopologyEpoch
		out.ProcessID = meta.ProcessID
		if e := meta.UserEndpoint; e != nil {
			out.UserEndpoint = &kmsg.StreamsGroupDescribeResponseGroupMemberUserEndpoint{Host: e.Host, Port: e.Port}
		}
		out.ClientTags = make([]kmsg.StreamsGroupDescribeResponseGroupMemberClientTag, 0, len(meta.ClientTags))
		for _, kv := range meta.ClientTags {
			out.ClientTags = append(out.ClientTags, kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{Key: kv.Key, Value: kv.Value})
		}
	}
	out.TaskOffsets = append([]kmsg.TaskOffset{}, m.TaskOffsets...)
	out.TaskEndOffsets = append([]kmsg.TaskOffset{}, m.TaskEndOffsets...)
	out.Assignment = streamsAssignment(cur.Assigned)
	out.TargetAssignment = streamsAssignment(g.Target[m.ID])
	// Kafka 4.4 always says false (its streams groups have no classic
	// members); here a classic member served through translation is one.
	out.IsClassic = m.IsClassic()
	return out
}

func streamsAssignment(t TaskSets) kmsg.StreamsAssignment {
	return kmsg.StreamsAssignment{
		ActiveTasks:  TasksToKmsg(t.Active),
		StandbyTasks: TasksToKmsg(t.Standby),
		WarmupTasks:  TasksToKmsg(t.Warmup),
	}
}

// DescribeGroup is the operation of StreamsGroupDescribe for one group
// (Coordinator.StreamsGroupDescribe): it only reads.
func (ch *Change) DescribeGroup(req *kmsg.StreamsGroupDescribeRequest) kmsg.StreamsGroupDescribeResponseGroup {
	g := ch.Group
	if g == nil {
		return DescribeError(ch.GroupID, Errorf(kerr.GroupIDNotFound, "Group %s not found.", ch.GroupID))
	}
	out := kmsg.NewStreamsGroupDescribeResponseGroup()
	out.Group = g.ID
	out.State = g.State().String()
	out.Epoch = g.GroupEpoch
	out.AssignmentEpoch = g.AssignmentEpoch
	if req.Version >= 1 {
		name := ch.Assignor.Name()
		out.AssignorName = &name
		out.TopologyDescriptionStatus = topologyDescriptionNotRequested
		if req.IncludeTopologyDescription {
			// Topology descriptions (API 93) are not stored by streamshift.
			out.TopologyDescriptionStatus = topologyDescriptionNotStored
		}
	}
	if g.Topology != nil {
		out.Topology = describeTopology(g.Topology, ch.describeConfigured())
	}
	ids := make([]string, 0, len(g.Members))
	for id := range g.Members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out.Members = make([]kmsg.StreamsGroupDescribeResponseGroupMember, 0, len(ids))
	for _, id := range ids {
		out.Members = append(out.Members, describeMember(g, g.Members[id]))
	}
	return out
}

// describeConfigured returns the configured topology for a describe,
// computing it (in memory, without creating topics) if it is stale.
func (ch *Change) describeConfigured() *configuredTopology {
	g, img := ch.Group, ch.Image
	mem := &g.Mem
	if mem.configured == nil || mem.configuredFor != g.Topology || mem.configuredVersion != img.Version() {
		return &configuredTopology{ConfiguredTopology: ch.Configure(*g.Topology, imagePartitions(img))}
	}
	return mem.configured
}
