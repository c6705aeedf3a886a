package classicstreams

import "slices"

// cmpByLess turns the strict order of a type's Less into a three-way compare
// for the slices package.
func cmpByLess[T interface{ Less(T) bool }](a, b T) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}

func cmpTask(a, b TaskID) int { return cmpByLess(a, b) }

func sortTasks(ts []TaskID) { slices.SortFunc(ts, cmpTask) }

func sortPartitions(tps []TopicPartition) { slices.SortFunc(tps, cmpByLess[TopicPartition]) }

func sortInt32(ps []int32) { slices.Sort(ps) }
