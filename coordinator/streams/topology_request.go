package streams

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// TopologyFromRequest converts the request's topology, keeping its order.
func TopologyFromRequest(t *kmsg.StreamsGroupHeartbeatRequestTopology) topology.Topology {
	out := topology.Topology{Epoch: t.Epoch, Subtopologies: make([]topology.Subtopology, 0, len(t.Subtopologies))}
	info := func(in []kmsg.TopicInfo) []topology.TopicInfo {
		if len(in) == 0 {
			return nil
		}
		res := make([]topology.TopicInfo, 0, len(in))
		for _, ti := range in {
			var cfgs []topology.Config
			for _, c := range ti.Configs {
				cfgs = append(cfgs, topology.Config{Key: c.Key, Value: c.Value})
			}
			res = append(res, topology.TopicInfo{Name: ti.Topic, Partitions: ti.NumPartitions, ReplicationFactor: ti.ReplicationFactor, Configs: cfgs})
		}
		return res
	}
	for _, s := range t.Subtopologies {
		st := topology.Subtopology{
			ID:                      s.SubtopologyID,
			SourceTopics:            slices.Clone(s.SourceTopics),
			SourceTopicRegex:        slices.Clone(s.SourceTopicRegex),
			RepartitionSinkTopics:   slices.Clone(s.RepartitionSinkTopics),
			RepartitionSourceTopics: info(s.RepartitionSourceTopics),
			StateChangelogTopics:    info(s.StateChangelogTopics),
		}
		for _, cg := range s.CopartitionGroups {
			st.CopartitionGroups = append(st.CopartitionGroups, topology.CopartitionGroup{
				SourceTopics:            slices.Clone(cg.SourceTopics),
				RepartitionSourceTopics: slices.Clone(cg.RepartitionSourceTopics),
			})
		}
		out.Subtopologies = append(out.Subtopologies, st)
	}
	return out
}

// topologyEqual compares two topologies field by field, order-sensitive as
// Kafka's comparison is (the Java client sorts what it sends).
func topologyEqual(a, b topology.Topology) bool {
	if a.Epoch != b.Epoch || len(a.Subtopologies) != len(b.Subtopologies) {
		return false
	}
	for i := range a.Subtopologies {
		x, y := a.Subtopologies[i], b.Subtopologies[i]
		if x.ID != y.ID || !slices.Equal(x.SourceTopics, y.SourceTopics) || !slices.Equal(x.SourceTopicRegex, y.SourceTopicRegex) ||
			!slices.Equal(x.RepartitionSinkTopics, y.RepartitionSinkTopics) ||
			!topicInfosEqual(x.RepartitionSourceTopics, y.RepartitionSourceTopics) ||
			!topicInfosEqual(x.StateChangelogTopics, y.StateChangelogTopics) ||
			len(x.CopartitionGroups) != len(y.CopartitionGroups) {
			return false
		}
		for j := range x.CopartitionGroups {
			if !slices.Equal(x.CopartitionGroups[j].SourceTopics, y.CopartitionGroups[j].SourceTopics) ||
				!slices.Equal(x.CopartitionGroups[j].RepartitionSourceTopics, y.CopartitionGroups[j].RepartitionSourceTopics) {
				return false
			}
		}
	}
	return true
}

func topicInfosEqual(a, b []topology.TopicInfo) bool {
	return slices.EqualFunc(a, b, func(x, y topology.TopicInfo) bool {
		return x.Name == y.Name && x.Partitions == y.Partitions && x.ReplicationFactor == y.ReplicationFactor && slices.Equal(x.Configs, y.Configs)
	})
}
