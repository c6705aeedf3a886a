package classicstreams

import "slices"

func sortTasks(ts []TaskID) {
	slices.SortFunc(ts, func(a, b TaskID) int {
		switch {
		case a.Less(b):
			return -1
		case b.Less(a):
			return 1
		}
		return 0
	})
}

func sortPartitions(tps []TopicPartition) {
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		switch {
		case a.Less(b):
			return -1
		case b.Less(a):
			return 1
		}
		return 0
	})
}

func sortInt32(ps []int32) { slices.Sort(ps) }
