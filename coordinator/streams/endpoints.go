package streams

import (
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// partitionsByUserEndpoint is the interactive-query map of the group (Kafka's
// EndpointToPartitionsManager): for every member with an endpoint, the
// partitions of the source and repartition-source topics of its active tasks,
// and separately of its standby and warm-up tasks. Task p maps to partition p
// of every such topic that has more than p partitions.
// The requesting member comes last, the others in member id order.
func partitionsByUserEndpoint(g *Group, c *configuredTopology, self string) []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint {
	ids := make([]string, 0, len(g.Members))
	for id, m := range g.Members {
		if id != self && m.Meta != nil && m.Meta.UserEndpoint != nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if m := g.Members[self]; m != nil && m.Meta != nil && m.Meta.UserEndpoint != nil {
		ids = append(ids, self)
	}
	out := make([]kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint, 0, len(ids))
	for _, id := range ids {
		m := g.Members[id]
		cur := m.CurrentAssignment()
		e := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpoint()
		e.UserEndpoint = kmsg.Endpoint{Host: m.Meta.UserEndpoint.Host, Port: m.Meta.UserEndpoint.Port}
		for _, tp := range taskPartitions(c, cur.Assigned.Active) {
			e.ActivePartitions = append(e.ActivePartitions, kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition{Topic: tp.topic, Partitions: tp.partitions})
		}
		for _, tp := range taskPartitions(c, TasksUnion(cur.Assigned.Standby, cur.Assigned.Warmup)) {
			e.StandbyPartitions = append(e.StandbyPartitions, kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition{Topic: tp.topic, Partitions: tp.partitions})
		}
		if e.ActivePartitions == nil {
			e.ActivePartitions = []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition{}
		}
		if e.StandbyPartitions == nil {
			e.StandbyPartitions = []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition{}
		}
		out = append(out, e)
	}
	return out
}

type topicPartitionList struct {
	topic      string
	partitions []int32
}

func taskPartitions(c *configuredTopology, tasks Tasks) []topicPartitionList {
	if !c.IsReady() || len(tasks) == 0 {
		return nil
	}
	byTopic := map[string][]int32{}
	for sid, ps := range tasks {
		s := c.SubtopologyByID(sid)
		if s == nil {
			continue
		}
		for _, topic := range s.SourceTopics {
			n := s.SourceTopicPartitions[topic]
			for _, p := range ps {
				if p < n {
					byTopic[topic] = append(byTopic[topic], p)
				}
			}
		}
	}
	out := make([]topicPartitionList, 0, len(byTopic))
	for t, ps := range byTopic {
		slices.Sort(ps)
		out = append(out, topicPartitionList{t, slices.Compact(ps)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].topic < out[j].topic })
	return out
}
