package topology

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// randomTopology draws a small topology over a few shared topic names, so
// that repartition chains, loops, copartition groups and name clashes all
// occur.
func randomTopology(r *rand.Rand) (Topology, map[string]int32) {
	pick := func(prefix string, n int) []string {
		var out []string
		for i := 0; i < r.IntN(n+1); i++ {
			out = append(out, fmt.Sprintf("%s%d", prefix, r.IntN(4)))
		}
		return out
	}
	var t Topology
	t.Epoch = int32(r.IntN(3))
	for i := 0; i < 1+r.IntN(4); i++ {
		s := Subtopology{ID: fmt.Sprint(i), SourceTopics: pick("src", 2), RepartitionSinkTopics: pick("rep", 2)}
		for _, n := range pick("rep", 2) {
			ti := TopicInfo{Name: n, ReplicationFactor: int16(r.IntN(3))}
			for range r.IntN(3) {
				ti.Configs = append(ti.Configs, Config{Key: fmt.Sprintf("k%d", r.IntN(3)), Value: fmt.Sprint(r.IntN(9))})
			}
			if r.IntN(4) == 0 {
				ti.Partitions = int32(1 + r.IntN(4))
			}
			s.RepartitionSourceTopics = append(s.RepartitionSourceTopics, ti)
		}
		// Changelog names are per subtopology, as Streams names them
		// after their store.
		if r.IntN(2) == 0 {
			s.StateChangelogTopics = []TopicInfo{{Name: fmt.Sprintf("chg%d", i)}}
		}
		if r.IntN(3) == 0 {
			var g CopartitionGroup
			for range 1 + r.IntN(2) {
				g.SourceTopics = append(g.SourceTopics, int16(r.IntN(3)))
			}
			if len(s.RepartitionSourceTopics) > 0 {
				g.RepartitionSourceTopics = []int16{int16(r.IntN(len(s.RepartitionSourceTopics)))}
			}
			s.CopartitionGroups = append(s.CopartitionGroups, g)
		}
		t.Subtopologies = append(t.Subtopologies, s)
	}
	cluster := map[string]int32{}
	for _, p := range []string{"src", "rep", "chg"} {
		for i := range 4 {
			if r.IntN(3) > 0 {
				cluster[fmt.Sprintf("%s%d", p, i)] = int32(1 + r.IntN(6))
			}
		}
	}
	return t, cluster
}

func TestConfigureRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	outcomes := map[string]int{}
	for i := range 20000 {
		topo, cluster := randomTopology(r)
		before := deepCopy(topo)
		ct := Configure(topo, counts(cluster))
		if !reflect.DeepEqual(topo, before) {
			t.Fatalf("case %d: input modified", i)
		}
		if again := Configure(topo, counts(cluster)); !reflect.DeepEqual(ct, again) {
			t.Fatalf("case %d: not deterministic", i)
		}
		switch {
		case ct.Err == nil:
			outcomes["ready"]++
		case ct.Err.IsStatus():
			outcomes[statusName(ct.Err.Status)]++
		default:
			outcomes[errorName(ct.Err.ErrorCode)]++
		}
		if ct.Err != nil && ct.Err.Status != StatusMissingInternalTopics && ct.ConfiguredSubtopologies != nil {
			t.Fatalf("case %d: subtopologies with error %v", i, ct.Err)
		}
		if (len(ct.TopicsToCreate) > 0) != (ct.Err != nil && ct.Err.Status == StatusMissingInternalTopics) {
			t.Fatalf("case %d: topics to create %v with error %v", i, ct.TopicsToCreate, ct.Err)
		}
		for _, s := range ct.ConfiguredSubtopologies {
			if s.NumTasks <= 0 {
				t.Fatalf("case %d: subtopology %s has %d tasks", i, s.ID, s.NumTasks)
			}
			for _, n := range s.StateChangelogTopics {
				if n != s.NumTasks {
					t.Fatalf("case %d: changelog count %d ≠ tasks %d", i, n, s.NumTasks)
				}
			}
			for _, topic := range s.SourceTopics {
				if s.SourceTopicPartitions[topic] > s.NumTasks {
					t.Fatalf("case %d: input %s larger than task count", i, topic)
				}
			}
		}
		if ct.Ready() {
			for _, s := range ct.ConfiguredSubtopologies {
				for topic, n := range s.RepartitionSourceTopics {
					if c, ok := cluster[topic]; !ok || c != n {
						t.Fatalf("case %d: ready with %s at %d, cluster %d/%v", i, topic, n, c, ok)
					}
				}
			}
		}
	}
	// The generator must reach every outcome, or the test proves little.
	for _, o := range []string{"ready", "MISSING_SOURCE_TOPICS", "INCORRECTLY_PARTITIONED_TOPICS",
		"MISSING_INTERNAL_TOPICS", "STREAMS_INVALID_TOPOLOGY"} {
		if outcomes[o] == 0 {
			t.Errorf("outcome %s never reached: %v", o, outcomes)
		}
	}
}

func deepCopy(t Topology) Topology {
	out := t
	out.Subtopologies = nil
	for _, s := range t.Subtopologies {
		c := s
		c.SourceTopics = append([]string(nil), s.SourceTopics...)
		c.RepartitionSinkTopics = append([]string(nil), s.RepartitionSinkTopics...)
		c.RepartitionSourceTopics = append([]TopicInfo(nil), s.RepartitionSourceTopics...)
		c.StateChangelogTopics = append([]TopicInfo(nil), s.StateChangelogTopics...)
		c.CopartitionGroups = append([]CopartitionGroup(nil), s.CopartitionGroups...)
		out.Subtopologies = append(out.Subtopologies, c)
	}
	return out
}
