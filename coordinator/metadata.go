package coordinator

import (
	"hash/fnv"
	"sync"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// MetadataSource supplies topic metadata. Neither method may block: Image
// returns the latest known image, and RequestRefresh only asks the source to
// fetch the named topics soon (after internal topics were created, or when a
// group needs topics the source does not track yet).
type MetadataSource interface {
	Image() streams.MetadataImage
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
	topics  map[string]streams.TopicMetadata
}

func (m *mapImage) Topic(name string) (streams.TopicMetadata, bool) {
	t, ok := m.topics[name]
	return t, ok
}

func (m *mapImage) Version() uint64 { return m.version }

// NewMetadataImage returns the image of topics at version, for a
// MetadataSource of another package; topics must not change afterwards (a
// change is a new image, at a new version).
func NewMetadataImage(version uint64, topics map[string]streams.TopicMetadata) streams.MetadataImage {
	return &mapImage{version: version, topics: topics}
}

// NewStaticMetadata returns an empty static source.
func NewStaticMetadata() *StaticMetadata {
	return &StaticMetadata{img: &mapImage{version: 1, topics: map[string]streams.TopicMetadata{}}}
}

func (s *StaticMetadata) Image() streams.MetadataImage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.img
}

func (s *StaticMetadata) RequestRefresh([]string) {}

// SetTopic creates or resizes a topic.
func (s *StaticMetadata) SetTopic(name string, partitions int32) {
	s.update(func(m map[string]streams.TopicMetadata) {
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
	s.update(func(m map[string]streams.TopicMetadata) { delete(m, name) })
}

func (s *StaticMetadata) update(f func(map[string]streams.TopicMetadata)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	topics := make(map[string]streams.TopicMetadata, len(s.img.topics)+1)
	for k, v := range s.img.topics {
		topics[k] = v
	}
	f(topics)
	s.img = &mapImage{version: s.img.version + 1, topics: topics}
}

// TopicCreator creates internal topics for the coordinator's callers (the
// topics its operations return; the coordinator itself creates none).
// CreateTopics must not block: it starts
// the creation and calls done (from any goroutine) with the error of each
// topic that failed; a topic that already exists is no error.
type TopicCreator interface {
	CreateTopics(topics []streams.CreatableTopic, done func(failed map[string]error))
}
