package topology

// changelogPartitionCounts gives every changelog topic of a subtopology the
// subtopology's task count, the largest partition count over its source and
// repartition source topics (Kafka 4.4's ChangelogTopics.setup).
func changelogPartitionCounts(subs []Subtopology, count countFunc) (map[string]int32, *Error) {
	counts := make(map[string]int32)
	for _, s := range subs {
		n, found, err := maxInputPartitions(s, count)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, invalidTopology("No source topics found for subtopology " + s.ID)
		}
		for _, c := range s.StateChangelogTopics {
			counts[c.Name] = n
		}
	}
	return counts, nil
}

// maxInputPartitions is the largest partition count over the topics a
// subtopology reads; found is false if it reads none.
func maxInputPartitions(s Subtopology, count countFunc) (n int32, found bool, err *Error) {
	visit := func(t string) *Error {
		c, ok := count(t)
		if !ok {
			return illegalState("No partition count for source topic " + t)
		}
		if !found || c > n {
			n, found = c, true
		}
		return nil
	}
	for _, t := range s.SourceTopics {
		if err := visit(t); err != nil {
			return 0, false, err
		}
	}
	for _, r := range s.RepartitionSourceTopics {
		if err := visit(r.Name); err != nil {
			return 0, false, err
		}
	}
	return n, found, nil
}
