package topology

import (
	"fmt"
	"sort"
)

// Configure decides the partition counts of a topology against the
// cluster's metadata, as Kafka 4.4's InternalTopicManager.configureTopics:
//
//  1. every source topic must exist (else MISSING_SOURCE_TOPICS);
//  2. repartition topics get their counts (RepartitionTopics);
//  3. copartition groups are enforced (CopartitionedTopicsEnforcer);
//  4. changelog topics get their subtopology's task count (ChangelogTopics);
//  5. each subtopology's task count is the largest partition count over
//     its source and repartition source topics;
//  6. internal topics are checked against the cluster: an existing one with
//     another count gives INCORRECTLY_PARTITIONED_TOPICS, missing ones are
//     listed in TopicsToCreate with status MISSING_INTERNAL_TOPICS.
//
// A result whose Err carries an ErrorCode (not a Status) means Kafka would
// fail the heartbeat with that error instead of configuring the topology.
// partitions may be nil (no topic exists). Configure never modifies t.
func Configure(t Topology, partitions PartitionCounts) ConfiguredTopology {
	ct := ConfiguredTopology{Epoch: t.Epoch}
	if partitions == nil {
		partitions = func(string) (int32, bool) { return 0, false }
	}
	seen := make(map[string]bool, len(t.Subtopologies))
	ids := make([]string, 0, len(t.Subtopologies))
	for _, s := range t.Subtopologies {
		if seen[s.ID] {
			ct.Err = illegalState("Duplicate key " + s.ID)
			return ct
		}
		seen[s.ID] = true
		ids = append(ids, s.ID)
	}
	// Kafka keeps the subtopologies in a HashMap by id and visits them in
	// its order, which decides ties (e.g. which error comes first).
	t = Topology{Epoch: t.Epoch, Subtopologies: inJavaOrder(t.Subtopologies, ids)}

	// Kafka resolves the copartition groups before anything else.
	groups := make([][][]string, len(t.Subtopologies))
	for i, s := range t.Subtopologies {
		g, err := copartitionGroupTopics(s)
		if err != nil {
			ct.Err = err
			return ct
		}
		groups[i] = g
	}
	if err := checkSourceTopics(t, partitions); err != nil {
		ct.Err = err
		return ct
	}
	decided, err := decidePartitionCounts(t, groups, partitions)
	if err != nil {
		ct.Err = err
		return ct
	}
	count := func(topic string) (int32, bool) {
		if n, ok := partitions(topic); ok {
			return n, true
		}
		n, ok := decided[topic]
		return n, ok
	}

	subs := make([]ConfiguredSubtopology, 0, len(t.Subtopologies))
	for _, s := range t.Subtopologies {
		cs, err := configureSubtopology(s, count, decided)
		if err != nil {
			ct.Err = err
			return ct
		}
		subs = append(subs, cs)
	}
	sort.Slice(subs, func(i, j int) bool { return subs[i].ID < subs[j].ID })

	toCreate, err := missingInternalTopicsToCreate(t, subs, partitions)
	if err != nil {
		ct.Err = err
		return ct
	}
	ct.ConfiguredSubtopologies = subs
	if len(toCreate) > 0 {
		ct.TopicsToCreate = toCreate
		names := make([]string, len(toCreate))
		for i, c := range toCreate {
			names[i] = c.Name
		}
		ct.Err = statusError(StatusMissingInternalTopics, "Internal topics are missing: "+summarizeTopics(names))
	}
	return ct
}

// checkSourceTopics reports the source topics absent from the cluster,
// sorted (Kafka's throwOnMissingSourceTopics).
func checkSourceTopics(t Topology, partitions PartitionCounts) *Error {
	var missing []string
	for _, s := range t.Subtopologies {
		for _, topic := range s.SourceTopics {
			if _, ok := partitions(topic); !ok {
				missing = append(missing, topic)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return statusError(StatusMissingSourceTopics, "Source topics "+summarizeTopics(sortedSet(missing))+" are missing.")
}

// decidePartitionCounts is Kafka's decidePartitionCounts: repartition
// topics, then copartitioning, then changelogs, all into one map that the
// later steps read through (cluster counts take precedence).
func decidePartitionCounts(t Topology, groups [][][]string, partitions PartitionCounts) (map[string]int32, *Error) {
	decided := make(map[string]int32)
	count := func(topic string) (int32, bool) {
		if n, ok := partitions(topic); ok {
			return n, true
		}
		n, ok := decided[topic]
		return n, ok
	}

	repartition, err := repartitionPartitionCounts(t.Subtopologies, count)
	if err != nil {
		return nil, err
	}
	for k, v := range repartition {
		decided[k] = v
	}

	fixed, flexible := make(map[string]bool), make(map[string]bool)
	for _, s := range t.Subtopologies {
		for _, r := range s.RepartitionSourceTopics {
			if r.Partitions != 0 {
				fixed[r.Name] = true
			} else {
				flexible[r.Name] = true
			}
		}
	}
	for _, subGroups := range groups {
		for _, g := range subGroups {
			counts, err := enforceCopartitioning(g, fixed, flexible, count)
			if err != nil {
				return nil, err
			}
			for k, v := range counts {
				decided[k] = v
			}
		}
	}

	changelogs, err := changelogPartitionCounts(t.Subtopologies, count)
	if err != nil {
		return nil, err
	}
	for k, v := range changelogs {
		decided[k] = v
	}
	return decided, nil
}

// copartitionGroupTopics resolves a subtopology's copartition groups from
// indices to topic names.
func copartitionGroupTopics(s Subtopology) ([][]string, *Error) {
	groups := make([][]string, 0, len(s.CopartitionGroups))
	for _, g := range s.CopartitionGroups {
		var topics []string
		for _, i := range g.SourceTopics {
			if i < 0 || int(i) >= len(s.SourceTopics) {
				return nil, copartitionIndexError(s.ID, "source", i, len(s.SourceTopics))
			}
			topics = append(topics, s.SourceTopics[i])
		}
		for _, i := range g.RepartitionSourceTopics {
			if i < 0 || int(i) >= len(s.RepartitionSourceTopics) {
				return nil, copartitionIndexError(s.ID, "repartition source", i, len(s.RepartitionSourceTopics))
			}
			topics = append(topics, s.RepartitionSourceTopics[i].Name)
		}
		groups = append(groups, topics)
	}
	return groups, nil
}

func copartitionIndexError(id, kind string, i int16, n int) *Error {
	return invalidTopology(fmt.Sprintf(
		"Copartition group of subtopology %s refers to %s topic index %d, but the subtopology has %d %s topics.",
		id, kind, i, n, kind))
}

// configureSubtopology is Kafka's fromPersistedSubtopology.
func configureSubtopology(s Subtopology, count countFunc, decided map[string]int32) (ConfiguredSubtopology, *Error) {
	n, found, err := maxInputPartitions(s, count)
	if err != nil {
		return ConfiguredSubtopology{}, err
	}
	if !found {
		return ConfiguredSubtopology{}, illegalState("Subtopology does not contain any source topics")
	}
	cs := ConfiguredSubtopology{
		ID:                      s.ID,
		NumTasks:                n,
		SourceTopicPartitions:   make(map[string]int32, len(s.SourceTopics)+len(s.RepartitionSourceTopics)),
		RepartitionSourceTopics: make(map[string]int32, len(s.RepartitionSourceTopics)),
		StateChangelogTopics:    make(map[string]int32, len(s.StateChangelogTopics)),
		Stateful:                len(s.StateChangelogTopics) > 0,
		ExternalSourceTopics:    sortedSet(s.SourceTopics),
		RepartitionSinkTopics:   sortedSet(s.RepartitionSinkTopics),
	}
	inputs := append([]string(nil), s.SourceTopics...)
	for _, r := range s.RepartitionSourceTopics {
		inputs = append(inputs, r.Name)
	}
	cs.SourceTopics = sortedSet(inputs)
	for _, t := range cs.SourceTopics {
		c, _ := count(t) // maxInputPartitions saw every input counted
		cs.SourceTopicPartitions[t] = c
	}

	var ierr *Error
	cs.RepartitionSourceTopicInfos, ierr = configureInternalTopics(s.RepartitionSourceTopics, decided, cs.RepartitionSourceTopics)
	if ierr != nil {
		return ConfiguredSubtopology{}, ierr
	}
	cs.StateChangelogTopicInfos, ierr = configureInternalTopics(s.StateChangelogTopics, decided, cs.StateChangelogTopics)
	if ierr != nil {
		return ConfiguredSubtopology{}, ierr
	}
	return cs, nil
}

// configureInternalTopics is Kafka's fromPersistedTopicInfo over a list:
// a count fixed by the member wins, otherwise the decided one.
func configureInternalTopics(infos []TopicInfo, decided map[string]int32, counts map[string]int32) ([]InternalTopic, *Error) {
	byName := make(map[string]InternalTopic, len(infos))
	for _, ti := range infos {
		// Kafka collects configs and topics with Collectors.toMap, which
		// throws on a repeated key.
		configs := make(map[string]string, len(ti.Configs))
		for _, c := range ti.Configs {
			if prev, dup := configs[c.Key]; dup {
				return nil, illegalState(fmt.Sprintf("Duplicate key %s (attempted merging values %s and %s)", c.Key, prev, c.Value))
			}
			configs[c.Key] = c.Value
		}
		if _, dup := byName[ti.Name]; dup {
			return nil, illegalState("Duplicate key " + ti.Name)
		}
		n := ti.Partitions
		if n == 0 {
			d, ok := decided[ti.Name]
			if !ok {
				return nil, illegalState("Number of partitions must be set for topic " + ti.Name)
			}
			n = d
		}
		byName[ti.Name] = InternalTopic{
			Name:              ti.Name,
			Partitions:        n,
			ReplicationFactor: ti.ReplicationFactor,
			Configs:           append([]Config(nil), ti.Configs...),
		}
		counts[ti.Name] = n
	}
	out := make([]InternalTopic, 0, len(byName))
	for _, it := range byName {
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// missingInternalTopicsToCreate is Kafka's missingInternalTopics: every
// repartition source and changelog topic is a candidate; one that exists
// must have the decided count, one that does not is to be created. The
// result is in the iteration order of Kafka's HashMap of topics to create,
// which is the order its MISSING_INTERNAL_TOPICS message names them in.
func missingInternalTopicsToCreate(t Topology, subs []ConfiguredSubtopology, partitions PartitionCounts) ([]TopicToCreate, *Error) {
	want := make(map[string]TopicToCreate)
	var inserted []string
	original := make(map[string]Subtopology, len(t.Subtopologies))
	for _, s := range t.Subtopologies {
		original[s.ID] = s
	}
	listed := func(infos []TopicInfo) []string {
		names := make([]string, len(infos))
		for i, ti := range infos {
			names[i] = ti.Name
		}
		return names
	}
	for _, s := range subs { // by id, as Kafka's TreeMap
		byName := make(map[string]InternalTopic)
		for _, it := range s.RepartitionSourceTopicInfos {
			byName[it.Name] = it
		}
		for _, it := range s.StateChangelogTopicInfos {
			byName[it.Name] = it
		}
		o := original[s.ID]
		// Each list went through its own HashMap (Collectors.toMap).
		for _, names := range [][]string{listed(o.RepartitionSourceTopics), listed(o.StateChangelogTopics)} {
			for _, n := range javaHashOrder(names) {
				if _, ok := want[n]; !ok {
					inserted = append(inserted, n)
				}
				want[n] = creatable(byName[n])
			}
		}
	}
	var required []string
	for _, s := range t.Subtopologies { // in Kafka's HashMap order
		required = append(required, s.SourceTopics...)
		for _, r := range s.RepartitionSourceTopics {
			required = append(required, r.Name)
		}
		for _, c := range s.StateChangelogTopics {
			required = append(required, c.Name)
		}
	}
	for _, topic := range javaHashOrder(distinct(required)) {
		found, ok := partitions(topic)
		if !ok {
			continue
		}
		expected, isInternal := want[topic]
		delete(want, topic)
		if isInternal && found != expected.Partitions {
			return nil, statusError(StatusIncorrectlyPartitionedTopics, fmt.Sprintf(
				"Existing topic %s has different number of partitions: expected %d, found %d",
				topic, expected.Partitions, found))
		}
	}
	out := make([]TopicToCreate, 0, len(want))
	for _, n := range javaHashOrder(inserted) {
		if c, ok := want[n]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// inJavaOrder returns the subtopologies in the iteration order of a Java
// HashMap keyed by their (distinct) ids.
func inJavaOrder(subs []Subtopology, ids []string) []Subtopology {
	byID := make(map[string]Subtopology, len(subs))
	for _, s := range subs {
		byID[s.ID] = s
	}
	out := make([]Subtopology, 0, len(subs))
	for _, id := range javaHashOrder(ids) {
		out = append(out, byID[id])
	}
	return out
}

// creatable is Kafka's toCreatableTopic: an unset replication factor (0)
// becomes -1, the broker's default.
func creatable(it InternalTopic) TopicToCreate {
	rf := it.ReplicationFactor
	if rf == 0 {
		rf = -1
	}
	return TopicToCreate{
		Name:              it.Name,
		Partitions:        it.Partitions,
		ReplicationFactor: rf,
		Configs:           append([]Config(nil), it.Configs...),
	}
}
