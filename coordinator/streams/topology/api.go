// Package topology configures a streams group's topology against the
// cluster's metadata (Kafka's InternalTopicManager.configureTopics): it
// decides repartition partition counts, enforces copartitioning, counts the
// tasks of each subtopology and lists the internal topics to create.
// Everything here is a pure function of its inputs.
// It imports only the standard library and the assignor's types, and
// creates nothing itself: the topics it lists are created by the
// coordinator's callers.
package topology

// Config is one topic config, kept in the order the member sent it.
type Config struct {
	Key, Value string
}

// TopicInfo is an internal (repartition or changelog) topic as the member
// describes it. Partitions 0 means "decided by the coordinator";
// ReplicationFactor 0 or -1 means the cluster default.
type TopicInfo struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
	Configs           []Config
}

// CopartitionGroup holds indices into the subtopology's SourceTopics and
// RepartitionSourceTopics, as in StreamsGroupHeartbeat.
type CopartitionGroup struct {
	SourceTopics            []int16
	RepartitionSourceTopics []int16
}

// Subtopology is one subtopology as the member sends it.
type Subtopology struct {
	ID                      string
	SourceTopics            []string
	SourceTopicRegex        []string
	RepartitionSinkTopics   []string
	RepartitionSourceTopics []TopicInfo
	StateChangelogTopics    []TopicInfo
	CopartitionGroups       []CopartitionGroup
}

// Topology is a streams group's topology at one topology epoch.
type Topology struct {
	Epoch         int32
	Subtopologies []Subtopology
}

// PartitionCounts reports the partition count of a topic in the cluster, and
// false if the topic does not exist.
type PartitionCounts func(topic string) (int32, bool)
