package topology

import (
	"fmt"
	"testing"
)

// topologyFromBytes builds an arbitrary topology from fuzz input: every
// byte picks a shape, a topic out of a small pool or a count, so that the
// names collide and reference each other.
func topologyFromBytes(data []byte) (Topology, map[string]int32) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	name := func() string { return fmt.Sprintf("t%d", next()%8) }
	var t Topology
	t.Epoch = int32(next() % 3)
	for i := range next() % 5 {
		s := Subtopology{ID: fmt.Sprint(next() % 6)}
		if i == 0 {
			s.ID = "0"
		}
		for range next() % 3 {
			s.SourceTopics = append(s.SourceTopics, name())
		}
		for range next() % 3 {
			s.RepartitionSinkTopics = append(s.RepartitionSinkTopics, name())
		}
		for range next() % 3 {
			s.RepartitionSourceTopics = append(s.RepartitionSourceTopics,
				TopicInfo{Name: name(), Partitions: int32(next()%5) - 1, ReplicationFactor: int16(next()%4) - 1})
		}
		for range next() % 3 {
			s.StateChangelogTopics = append(s.StateChangelogTopics, TopicInfo{Name: name(), Partitions: int32(next() % 2)})
		}
		for range next() % 2 {
			g := CopartitionGroup{}
			for range next() % 3 {
				g.SourceTopics = append(g.SourceTopics, int16(next()%4)-1)
			}
			for range next() % 3 {
				g.RepartitionSourceTopics = append(g.RepartitionSourceTopics, int16(next()%4)-1)
			}
			s.CopartitionGroups = append(s.CopartitionGroups, g)
		}
		t.Subtopologies = append(t.Subtopologies, s)
	}
	cluster := map[string]int32{}
	for i := range 8 {
		if n := next() % 5; n > 0 {
			cluster[fmt.Sprintf("t%d", i)] = int32(n)
		}
	}
	return t, cluster
}

// FuzzConfigure: any topology a member can send, valid or not, gets a
// result and no panic; a ready result is self-consistent.
func FuzzConfigure(f *testing.F) {
	f.Add([]byte{1, 2, 1, 0, 1, 1, 1, 2, 0, 0, 1, 3, 3, 3, 3, 3, 3, 3, 3})
	f.Add([]byte{0, 4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		topo, cluster := topologyFromBytes(data)
		_ = Validate(topo)
		ct := Configure(topo, counts(cluster))
		if ct.Ready() {
			for _, s := range ct.ConfiguredSubtopologies {
				if s.NumTasks < 0 {
					t.Fatalf("negative task count %+v", s)
				}
			}
		}
		_ = ct.Subtopologies()
	})
}
