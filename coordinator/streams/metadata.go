package streams

import (
	"encoding/binary"
	"hash/fnv"
	"slices"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// What an operation knows of the cluster: the metadata image the runtime
// gives its change, and the internal topics it asks to create.

// TopicMetadata is what the coordinator needs to know about one topic.
type TopicMetadata struct {
	Name       string
	ID         [16]byte
	Partitions int32
}

// MetadataImage is an immutable view of the cluster's topics.
type MetadataImage interface {
	Topic(name string) (TopicMetadata, bool)
	// Version changes whenever the image's content changes; a group
	// reconfigures its topology when it sees a new version.
	Version() uint64
}

// MetadataHash hashes what the group's topology depends on: name, id and
// partition count of each existing topic, in name order. Kafka 4.4 uses xxh3
// and also hashes replica racks; any stable hash serves, since only changes
// matter and the value never leaves the proxy.
func MetadataHash(img MetadataImage, topics []string) uint64 {
	names := slices.Clone(topics)
	slices.Sort(names)
	names = slices.Compact(names)
	h := fnv.New64a()
	var buf [4]byte
	for _, n := range names {
		t, ok := img.Topic(n)
		if !ok {
			continue
		}
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(t.ID[:])
		binary.BigEndian.PutUint32(buf[:], uint32(t.Partitions))
		h.Write(buf[:])
	}
	return h.Sum64()
}

// CreatableTopic is an internal topic the coordinator wants created.
type CreatableTopic struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16 // -1: the cluster default
	Configs           []KeyValue
}

// imagePartitions adapts a metadata image to topology.PartitionCounts.
func imagePartitions(img MetadataImage) topology.PartitionCounts {
	return func(topic string) (int32, bool) {
		t, ok := img.Topic(topic)
		return t.Partitions, ok
	}
}
