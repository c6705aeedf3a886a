package coordinator

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"sync"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

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

// MetadataSource supplies topic metadata. Neither method may block: Image
// returns the latest known image, and RequestRefresh only asks the source to
// fetch the named topics soon (after internal topics were created, or when a
// group needs topics the source does not track yet).
type MetadataSource interface {
	Image() MetadataImage
	RequestRefresh(topics []string)
}

// StaticMetadata is a MetadataSource whose topics are set by hand (tests, and
// the kfake-less unit level).
type StaticMetadata struct {
	mu  sync.Mutex
	img *mapImage
}

type mapImage struct {
	version uint64
	topics  map[string]TopicMetadata
}

func (m *mapImage) Topic(name string) (TopicMetadata, bool) {
	t, ok := m.topics[name]
	return t, ok
}

func (m *mapImage) Version() uint64 { return m.version }

// NewMetadataImage returns the image of topics at version, for a
// MetadataSource of another package; topics must not change afterwards (a
// change is a new image, at a new version).
func NewMetadataImage(version uint64, topics map[string]TopicMetadata) MetadataImage {
	return &mapImage{version: version, topics: topics}
}

// NewStaticMetadata returns an empty static source.
func NewStaticMetadata() *StaticMetadata {
	return &StaticMetadata{img: &mapImage{version: 1, topics: map[string]TopicMetadata{}}}
}

func (s *StaticMetadata) Image() MetadataImage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.img
}

func (s *StaticMetadata) RequestRefresh([]string) {}

// SetTopic creates or resizes a topic.
func (s *StaticMetadata) SetTopic(name string, partitions int32) {
	s.update(func(m map[string]TopicMetadata) {
		t, ok := m[name]
		if !ok {
			h := fnv.New128a()
			h.Write([]byte(name))
			copy(t.ID[:], h.Sum(nil))
		}
		t.Name, t.Partitions = name, partitions
		m[name] = t
	})
}

// DeleteTopic removes a topic.
func (s *StaticMetadata) DeleteTopic(name string) {
	s.update(func(m map[string]TopicMetadata) { delete(m, name) })
}

func (s *StaticMetadata) update(f func(map[string]TopicMetadata)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	topics := make(map[string]TopicMetadata, len(s.img.topics)+1)
	for k, v := range s.img.topics {
		topics[k] = v
	}
	f(topics)
	s.img = &mapImage{version: s.img.version + 1, topics: topics}
}

// metadataHash hashes what the group's topology depends on: name, id and
// partition count of each existing topic, in name order. Kafka 4.4 uses xxh3
// and also hashes replica racks; any stable hash serves, since only changes
// matter and the value never leaves the proxy.
func metadataHash(img MetadataImage, topics []string) uint64 {
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
	Configs           []streams.KeyValue
}

// TopicCreator creates internal topics. CreateTopics must not block: it starts
// the creation and calls done (from any goroutine) with the error of each
// topic that failed; a topic that already exists is no error.
type TopicCreator interface {
	CreateTopics(topics []CreatableTopic, done func(failed map[string]error))
}

// imagePartitions adapts a metadata image to topology.PartitionCounts.
func imagePartitions(img MetadataImage) topology.PartitionCounts {
	return func(topic string) (int32, bool) {
		t, ok := img.Topic(topic)
		return t.Partitions, ok
	}
}
