package topology

import (
	"sort"
	"strings"
)

// countFunc returns a topic's partition count: the cluster's if the topic
// exists, else the count decided so far (Kafka's getPartitionCount).
type countFunc func(topic string) (int32, bool)

// repartitionPartitionCounts decides the partition count of every
// repartition topic (Kafka's RepartitionTopics.setup): a count fixed by the
// topology is kept, any other repartition topic gets, by fix-point
// iteration, the largest partition count over the inputs of the
// subtopology that writes it.
func repartitionPartitionCounts(subs []Subtopology, count countFunc) (map[string]int32, *Error) {
	var missing []string
	for _, s := range subs {
		missing = append(missing, missingExternalSourceTopics(s, count)...)
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, illegalState("Missing source topics: " + strings.Join(dedupSorted(missing), ", "))
	}

	counts := make(map[string]int32)
	for _, s := range subs {
		for _, r := range s.RepartitionSourceTopics {
			if r.Partitions != 0 {
				counts[r.Name] = r.Partitions
			}
		}
	}
	for {
		needed, progress := false, false
		for _, s := range subs {
			for _, sink := range s.RepartitionSinkTopics {
				if _, ok := counts[sink]; ok {
					continue
				}
				if n, ok := writerPartitionCount(counts, s, count); ok {
					counts[sink] = n
					progress = true
				} else {
					needed = true
				}
			}
		}
		if !needed {
			break
		}
		if !progress {
			return nil, invalidTopology("Failed to compute number of partitions for all repartition topics. " +
				"There may be loops in the topology that cannot be resolved.")
		}
	}

	for _, s := range subs {
		for _, r := range s.RepartitionSourceTopics {
			if _, ok := counts[r.Name]; !ok {
				return nil, invalidTopology("Failed to compute number of partitions for all repartition topics, " +
					"because a repartition source topic is never used as a sink topic.")
			}
		}
	}
	return counts, nil
}

// missingExternalSourceTopics lists the subtopology's source topics that are
// neither repartition topics nor known to the cluster.
func missingExternalSourceTopics(s Subtopology, count countFunc) []string {
	var missing []string
	for _, t := range s.SourceTopics {
		if isRepartitionSource(s, t) {
			continue
		}
		if _, ok := count(t); !ok {
			missing = append(missing, t)
		}
	}
	return missing
}

func isRepartitionSource(s Subtopology, topic string) bool {
	for _, r := range s.RepartitionSourceTopics {
		if r.Name == topic {
			return true
		}
	}
	return false
}

// writerPartitionCount is the largest partition count over the inputs of a
// subtopology whose counts are already known. Kafka does not wait for all
// of them: a repartition source still undecided is skipped.
func writerPartitionCount(counts map[string]int32, s Subtopology, count countFunc) (int32, bool) {
	var max int32
	found := false
	for _, r := range s.RepartitionSourceTopics {
		if n, ok := counts[r.Name]; ok && (!found || n > max) {
			max, found = n, true
		}
	}
	for _, t := range s.SourceTopics {
		if n, ok := count(t); ok && (!found || n > max) {
			max, found = n, true
		}
	}
	return max, found
}

func dedupSorted(s []string) []string {
	out := s[:0:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
