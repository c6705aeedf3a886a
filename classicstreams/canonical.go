package classicstreams

import (
	"slices"
	"strings"
)

// Canonical returns a copy of s in a canonical order, for comparing values
// regardless of the hash-map order Java wrote: task lists, offset sums
// (by task) and client tags (by key) sorted, empty lists nil.
func (s *SubscriptionInfo) Canonical() SubscriptionInfo {
	c := *s
	c.PrevTasks = sortedTasks(s.PrevTasks)
	c.StandbyTasks = sortedTasks(s.StandbyTasks)
	c.TaskOffsetSums = nilIfEmpty(slices.Clone(s.TaskOffsetSums))
	slices.SortStableFunc(c.TaskOffsetSums, func(a, b TaskOffsetSum) int { return cmpTask(a.Task, b.Task) })
	c.ClientTags = nilIfEmpty(slices.Clone(s.ClientTags))
	slices.SortStableFunc(c.ClientTags, func(a, b ClientTag) int { return strings.Compare(a.Key, b.Key) })
	return c
}

// Canonical returns a copy of a in a canonical order: standby tasks by task,
// host maps by host and port, every partition set sorted, empty lists nil,
// no topic dictionary. ActiveTasks keeps its order, which is meaningful.
func (a *AssignmentInfo) Canonical() AssignmentInfo {
	c := *a
	c.TopicDictionary = nil
	c.ActiveTasks = nilIfEmpty(slices.Clone(a.ActiveTasks))
	c.StandbyTasks = nilIfEmpty(slices.Clone(a.StandbyTasks))
	for i := range c.StandbyTasks {
		c.StandbyTasks[i].Partitions = sortedPartitions(c.StandbyTasks[i].Partitions)
	}
	slices.SortStableFunc(c.StandbyTasks, func(x, y StandbyTask) int { return cmpTask(x.Task, y.Task) })
	c.PartitionsByHost = canonicalHostMap(a.PartitionsByHost)
	c.StandbyPartitionsByHost = canonicalHostMap(a.StandbyPartitionsByHost)
	return c
}

// Canonical returns a copy of s with empty lists nil.
func (s *ConsumerSubscription) Canonical() ConsumerSubscription {
	c := *s
	c.Topics = nilIfEmpty(slices.Clone(s.Topics))
	c.OwnedPartitions = nilIfEmpty(slices.Clone(s.OwnedPartitions))
	return c
}

// Canonical returns a copy of a with empty lists nil.
func (a *ConsumerAssignment) Canonical() ConsumerAssignment {
	c := *a
	c.AssignedPartitions = nilIfEmpty(slices.Clone(a.AssignedPartitions))
	return c
}

func canonicalHostMap(m []HostPartitions) []HostPartitions {
	c := nilIfEmpty(slices.Clone(m))
	for i := range c {
		c[i].Partitions = sortedPartitions(c[i].Partitions)
	}
	slices.SortStableFunc(c, func(x, y HostPartitions) int {
		if d := strings.Compare(x.Host, y.Host); d != 0 {
			return d
		}
		return int(x.Port) - int(y.Port)
	})
	return c
}

func sortedTasks(ts []TaskID) []TaskID {
	c := nilIfEmpty(slices.Clone(ts))
	sortTasks(c)
	return c
}

func sortedPartitions(tps []TopicPartition) []TopicPartition {
	c := nilIfEmpty(slices.Clone(tps))
	sortPartitions(c)
	return c
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
