package classicstreams

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Consumer protocol constants of a Kafka Streams member's JoinGroup.
const (
	// ProtocolType is the JoinGroup protocol type of every Java consumer.
	ProtocolType = "consumer"
	// StreamsProtocolName is the one protocol a Streams member offers: the
	// name of StreamsPartitionAssignor.
	StreamsProtocolName = "stream"
	// MaxConsumerProtocolVersion is the highest ConsumerProtocolSubscription /
	// ConsumerProtocolAssignment version; higher versions are read as this
	// one, as the Java consumer does (the layouts only ever append fields).
	MaxConsumerProtocolVersion = 3
)

// ConsumerSubscription is the JoinGroup metadata of a consumer
// (ConsumerProtocolSubscription, v0-v3). For a Streams member UserData is
// its SubscriptionInfo.
type ConsumerSubscription struct {
	// Version as written by the member; layouts above
	// MaxConsumerProtocolVersion are read as MaxConsumerProtocolVersion.
	Version int16    `json:"version"`
	Topics  []string `json:"topics"`
	// UserData is nil when the member sent null. It aliases the input.
	UserData []byte `json:"userData"`
	// OwnedPartitions (v1+), flattened in wire order (grouped by topic).
	OwnedPartitions []TopicPartition `json:"ownedPartitions,omitempty"`
	// GenerationID (v2+) is -1 when absent or after a reset.
	GenerationID int32 `json:"generationId"`
	// RackID (v3+) is client.rack, nil if unset.
	RackID *string `json:"rackId,omitempty"`
	// UserDataOffset is where UserData starts in the decoded input, to
	// report offsets of errors inside it.
	UserDataOffset int `json:"-"`
}

// ConsumerAssignment is the SyncGroup assignment of a consumer
// (ConsumerProtocolAssignment, same layout in v0-v3). For a Streams member
// UserData is its AssignmentInfo.
type ConsumerAssignment struct {
	Version            int16            `json:"version"`
	AssignedPartitions []TopicPartition `json:"assignedPartitions"`
	UserData           []byte           `json:"userData"`
	// UserDataOffset is where UserData starts in the decoded input.
	UserDataOffset int `json:"-"`
}

const (
	consumerSubscriptionName = "ConsumerProtocolSubscription"
	consumerAssignmentName   = "ConsumerProtocolAssignment"
	topicPartitionsSize      = 2 + 4 // empty topic + empty partition list
)

// DecodeConsumerSubscription decodes JoinGroup protocol metadata.
func DecodeConsumerSubscription(b []byte) (*ConsumerSubscription, error) {
	r := reader{src: b, payload: consumerSubscriptionName}
	s := &ConsumerSubscription{GenerationID: -1}
	s.Version = r.int16("version")
	if r.err == nil && s.Version < 0 {
		r.failAt(0, "version", ErrUnknownVersion)
	}
	v := min(s.Version, MaxConsumerProtocolVersion)
	if n := r.count("topics", 2, false); n > 0 {
		s.Topics = make([]string, n)
		for i := range s.Topics {
			s.Topics[i], _ = r.string16("topics", false)
		}
	}
	s.UserDataOffset = r.off + 4
	s.UserData = r.bytes32("userData", true)
	if v >= 1 {
		s.OwnedPartitions = r.topicPartitions("ownedPartitions")
	}
	if v >= 2 {
		s.GenerationID = r.int32("generationId")
	}
	if v >= 3 {
		if rack, ok := r.string16("rackId", true); ok {
			s.RackID = &rack
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return s, nil
}

// topicPartitions reads [{Topic string, Partitions []int32}] flattened.
func (r *reader) topicPartitions(field string) []TopicPartition {
	start := r.off
	n := r.count(field, topicPartitionsSize, false)
	if n <= 0 {
		return nil
	}
	// First pass: the total number of partitions, so the result is one
	// allocation bounded by the input.
	total := 0
	for range n {
		r.string16(field+".topic", false)
		k := r.count(field+".partitions", 4, false)
		if r.err != nil {
			return nil
		}
		r.off += 4 * k
		total += k
	}
	r.off = start + 4
	out := make([]TopicPartition, 0, total)
	for range n {
		topic, _ := r.string16(field+".topic", false)
		k := r.count(field+".partitions", 4, false)
		for range k {
			out = append(out, TopicPartition{Topic: topic, Partition: r.int32(field + ".partitions")})
		}
	}
	return out
}

// DecodeConsumerAssignment decodes a SyncGroup member assignment.
func DecodeConsumerAssignment(b []byte) (*ConsumerAssignment, error) {
	r := reader{src: b, payload: consumerAssignmentName}
	a := &ConsumerAssignment{}
	a.Version = r.int16("version")
	if r.err == nil && a.Version < 0 {
		r.failAt(0, "version", ErrUnknownVersion)
	}
	a.AssignedPartitions = r.topicPartitions("assignedPartitions")
	a.UserDataOffset = r.off + 4
	a.UserData = r.bytes32("userData", true)
	if r.err != nil {
		return nil, r.err
	}
	return a, nil
}

// Kmsg returns s as franz-go's type, at a version capped to what both know.
func (s *ConsumerSubscription) Kmsg() kmsg.ConsumerMemberMetadata {
	m := kmsg.NewConsumerMemberMetadata()
	m.Version = min(s.Version, MaxConsumerProtocolVersion)
	m.Topics = s.Topics
	m.UserData = s.UserData
	m.OwnedPartitions = groupOwned(s.OwnedPartitions)
	m.Generation = s.GenerationID
	m.Rack = s.RackID
	return m
}

// Kmsg returns a as franz-go's type, at a version capped to what both know.
func (a *ConsumerAssignment) Kmsg() kmsg.ConsumerMemberAssignment {
	m := kmsg.NewConsumerMemberAssignment()
	m.Version = min(a.Version, MaxConsumerProtocolVersion)
	for _, g := range groupPartitions(a.AssignedPartitions) {
		m.Topics = append(m.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: g.topic, Partitions: g.partitions})
	}
	m.UserData = a.UserData
	return m
}

// Encode writes s at min(s.Version, MaxConsumerProtocolVersion), grouping
// owned partitions by consecutive topic as given (the Java client groups
// them sorted by topic, then partition).
func (s *ConsumerSubscription) Encode() []byte {
	m := s.Kmsg()
	return m.AppendTo(nil)
}

// Encode writes a at min(a.Version, MaxConsumerProtocolVersion). A nil
// UserData is written as null; Kafka Streams always sends an AssignmentInfo.
func (a *ConsumerAssignment) Encode() []byte {
	m := a.Kmsg()
	return m.AppendTo(nil)
}

type topicGroup struct {
	topic      string
	partitions []int32
}

// groupPartitions groups consecutive partitions of the same topic, keeping
// order, as the wire layout needs.
func groupPartitions(tps []TopicPartition) []topicGroup {
	var out []topicGroup
	for _, tp := range tps {
		if len(out) == 0 || out[len(out)-1].topic != tp.Topic {
			out = append(out, topicGroup{topic: tp.Topic})
		}
		g := &out[len(out)-1]
		g.partitions = append(g.partitions, tp.Partition)
	}
	return out
}

func groupOwned(tps []TopicPartition) []kmsg.ConsumerMemberMetadataOwnedPartition {
	var out []kmsg.ConsumerMemberMetadataOwnedPartition
	for _, g := range groupPartitions(tps) {
		out = append(out, kmsg.ConsumerMemberMetadataOwnedPartition{Topic: g.topic, Partitions: g.partitions})
	}
	return out
}
