package streams

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// Topology description statuses of StreamsGroupDescribe v1.
const (
	TopologyDescriptionNotRequested int8 = 0
	TopologyDescriptionNotStored    int8 = 1
)

func DescribeError(id string, err *CoordError) kmsg.StreamsGroupDescribeResponseGroup {
	g := kmsg.NewStreamsGroupDescribeResponseGroup()
	g.Group = id
	g.ErrorCode = err.Code.Code
	msg := err.Msg
	g.ErrorMessage = &msg
	return g
}

// DescribeTopology reports the configured subtopologies (with decided
// partition counts) when the topology is ready, else the stored one.
func DescribeTopology(t *topology.Topology, cfgd *ConfiguredTopology) *kmsg.StreamsGroupDescribeResponseGroupTopology {
	out := &kmsg.StreamsGroupDescribeResponseGroupTopology{Epoch: t.Epoch, Subtopologies: []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{}}
	if cfgd.IsReady() {
		for _, s := range cfgd.ConfiguredSubtopologies {
			out.Subtopologies = append(out.Subtopologies, kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{
				SubtopologyID:           s.ID,
				SourceTopics:            append([]string{}, s.ExternalSourceTopics...),
				RepartitionSinkTopics:   append([]string{}, s.RepartitionSinkTopics...),
				StateChangelogTopics:    internalTopicInfos(s.StateChangelogTopicInfos),
				RepartitionSourceTopics: internalTopicInfos(s.RepartitionSourceTopicInfos),
			})
		}
		return out
	}
	for _, s := range t.Subtopologies {
		out.Subtopologies = append(out.Subtopologies, kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{
			SubtopologyID:           s.ID,
			SourceTopics:            append([]string{}, s.SourceTopics...),
			RepartitionSinkTopics:   append([]string{}, s.RepartitionSinkTopics...),
			StateChangelogTopics:    topicInfos(s.StateChangelogTopics),
			RepartitionSourceTopics: topicInfos(s.RepartitionSourceTopics),
		})
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

func DescribeMember(g *Group, m *Member) kmsg.StreamsGroupDescribeResponseGroupMember {
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
