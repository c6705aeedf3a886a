package topology

import (
	"sort"

	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

// InternalTopic is a repartition or changelog topic with its decided
// partition count (Kafka's ConfiguredInternalTopic). ReplicationFactor and
// Configs are as the member sent them (0 = cluster default).
type InternalTopic struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
	Configs           []Config
}

// TopicToCreate is a missing internal topic the coordinator must create
// (Kafka's CreatableTopic): ReplicationFactor -1 means the cluster default,
// Configs are the member's TopicConfigs verbatim, in the order sent.
type TopicToCreate struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
	Configs           []Config
}

// ConfiguredSubtopology is a subtopology whose partition counts are decided
// (Kafka's ConfiguredSubtopology).
type ConfiguredSubtopology struct {
	ID string
	// NumTasks is the largest partition count over SourceTopics.
	NumTasks int32
	// SourceTopics are the topics the subtopology reads, external source
	// topics and repartition source topics, sorted: task p is partition p
	// of each of them that has more than p partitions.
	SourceTopics []string
	// SourceTopicPartitions is the partition count of every SourceTopics
	// entry (from the cluster if the topic exists, else as decided).
	SourceTopicPartitions map[string]int32
	// RepartitionSourceTopics and StateChangelogTopics map each internal
	// topic to its partition count.
	RepartitionSourceTopics map[string]int32
	StateChangelogTopics    map[string]int32
	// Stateful subtopologies have changelogs; only they get standby tasks.
	Stateful bool

	// ExternalSourceTopics are the subtopology's non-internal source topics
	// (Kafka's ConfiguredSubtopology.sourceTopics), sorted.
	ExternalSourceTopics []string
	// RepartitionSinkTopics are the repartition topics it writes, sorted.
	RepartitionSinkTopics []string
	// RepartitionSourceTopicInfos and StateChangelogTopicInfos carry the
	// internal topics with replication factor and configs, sorted by name,
	// as StreamsGroupDescribe reports them.
	RepartitionSourceTopicInfos []InternalTopic
	StateChangelogTopicInfos    []InternalTopic
}

// ConfiguredTopology is the outcome of Configure (Kafka's
// ConfiguredTopology). ConfiguredSubtopologies is nil when configuration
// failed before partition counts were decided (Err set and not
// MISSING_INTERNAL_TOPICS); with missing internal topics it is filled in and
// TopicsToCreate lists what to create, but the topology is not ready.
type ConfiguredTopology struct {
	Epoch int32
	// ConfiguredSubtopologies is sorted by ID (string order, as Kafka's
	// TreeMap). It cannot be named Subtopologies: that is the method that
	// makes a ConfiguredTopology an assignor.TopologyDescriber.
	ConfiguredSubtopologies []ConfiguredSubtopology
	// TopicsToCreate is in Kafka's order, the order its
	// MISSING_INTERNAL_TOPICS message names them in.
	TopicsToCreate []TopicToCreate
	// Err is nil iff the topology is ready.
	Err *Error
}

// Ready reports whether tasks can be assigned (Kafka's isReady: no topic
// configuration problem).
func (c ConfiguredTopology) Ready() bool { return c.Err == nil }

// Subtopologies describes the configured subtopologies to the assignor,
// sorted by id. A topology that is not ready describes no subtopologies,
// which gives every member an empty target assignment, as Kafka does.
func (c ConfiguredTopology) Subtopologies() []assignor.Subtopology {
	if !c.Ready() {
		return nil
	}
	out := make([]assignor.Subtopology, len(c.ConfiguredSubtopologies))
	for i, s := range c.ConfiguredSubtopologies {
		out[i] = assignor.Subtopology{ID: s.ID, NumTasks: s.NumTasks, Stateful: s.Stateful}
	}
	return out
}

// Subtopology finds a configured subtopology by id.
func (c ConfiguredTopology) Subtopology(id string) (ConfiguredSubtopology, bool) {
	subs := c.ConfiguredSubtopologies
	i := sort.Search(len(subs), func(i int) bool { return subs[i].ID >= id })
	if i < len(subs) && subs[i].ID == id {
		return subs[i], true
	}
	return ConfiguredSubtopology{}, false
}

var _ assignor.TopologyDescriber = ConfiguredTopology{}
