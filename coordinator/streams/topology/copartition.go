package topology

import (
	"fmt"
	"sort"
	"strings"
)

// enforceCopartitioning gives every topic of one copartition group the same
// partition count (Kafka's CopartitionedTopicsEnforcer.enforce) and returns
// the decided counts of the group's repartition topics.
//
// fixed and flexible are the topology's repartition source topics whose
// count the member fixed (Partitions ≠ 0) or left to the coordinator.
func enforceCopartitioning(group []string, fixed, flexible map[string]bool, count countFunc) (map[string]int32, *Error) {
	if len(group) == 0 {
		return nil, nil
	}
	// Kafka holds the group in a HashSet and the counts in HashMaps: visit
	// them in their iteration order, so the same topic is reported first.
	topics := javaHashOrder(distinct(group))

	repartition := make(map[string]int32)
	var repartitionNames []string
	nonRepartition := make(map[string]int32)
	var nonRepartitionNames []string
	for _, t := range topics {
		if fixed[t] || flexible[t] {
			n, ok := count(t)
			if !ok {
				return nil, illegalState("Number of partitions is not set for topic: " + t)
			}
			repartition[t] = n
			repartitionNames = append(repartitionNames, t)
		}
	}
	for _, t := range topics {
		if !fixed[t] && !flexible[t] {
			n, ok := count(t)
			if !ok {
				return nil, illegalState("Number of partitions is not set for topic: " + t)
			}
			nonRepartition[t] = n
			nonRepartitionNames = append(nonRepartitionNames, t)
		}
	}
	repartitionNames = javaHashOrder(repartitionNames)
	sortedNonRepartition := sortedSet(nonRepartitionNames) // Kafka prints a TreeMap
	sortedRepartition := sortedSet(repartitionNames)

	var use int32
	switch {
	case len(nonRepartitionNames) > 0:
		// External topics decide, and they must agree.
		use = nonRepartition[nonRepartitionNames[0]]
		for _, t := range nonRepartitionNames {
			if nonRepartition[t] != use {
				return nil, statusError(StatusIncorrectlyPartitionedTopics, fmt.Sprintf(
					"Following topics do not have the same number of partitions: [%s]",
					javaMap(sortedNonRepartition, nonRepartition)))
			}
		}
	case len(fixed) > 0:
		// Kafka checks every fixed repartition topic of the whole topology
		// here, not only the group's: all of them must agree.
		var err *Error
		if use, err = fixedPartitionCount(fixed, sortedRepartition, repartition, count); err != nil {
			return nil, err
		}
	default:
		for _, t := range repartitionNames {
			use = max(use, repartition[t])
		}
		if use == 0 {
			return nil, invalidTopology("All topics in the copartition group had undefined partition number: [" +
				strings.Join(repartitionNames, ", ") + "]")
		}
	}

	decided := make(map[string]int32, len(repartitionNames))
	for _, t := range repartitionNames {
		decided[t] = use
		if fixed[t] && repartition[t] != use {
			return nil, statusError(StatusIncorrectlyPartitionedTopics, fmt.Sprintf(
				"Number of partitions [%d] of repartition topic [%s] doesn't match number of partitions [%d] of the source topic.",
				repartition[t], t, use))
		}
	}
	return decided, nil
}

// fixedPartitionCount is Kafka's validateAndGetNumOfPartitions: the common
// count of all fixed repartition topics.
func fixedPartitionCount(fixed map[string]bool, groupNames []string, groupCounts map[string]int32, count countFunc) (int32, *Error) {
	names := make([]string, 0, len(fixed))
	for t := range fixed {
		names = append(names, t)
	}
	sort.Strings(names)
	var first int32
	for i, t := range names {
		n, ok := count(t)
		if !ok {
			return 0, illegalState("Number of partitions is not set for topic: " + t)
		}
		if i == 0 {
			first = n
		} else if n != first {
			return 0, statusError(StatusIncorrectlyPartitionedTopics, fmt.Sprintf(
				"Following topics do not have the same number of partitions: [%s]",
				javaMap(groupNames, groupCounts)))
		}
	}
	return first, nil
}

func sortedSet(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return dedupSorted(out)
}
