package coordinator

import (
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

// Tasks maps a subtopology id to its task partitions, sorted ascending, without
// duplicates and without empty entries. A Tasks value is never modified once
// built: records and group state share them.
type Tasks = assignor.Tasks

// TaskID names one task.
type TaskID struct {
	Subtopology string
	Partition   int32
}

// TaskSets are the three roles a member can hold tasks in (Kafka's TasksTuple).
type TaskSets struct {
	Active  Tasks
	Standby Tasks
	Warmup  Tasks
}

func (t TaskSets) isEmpty() bool {
	return len(t.Active) == 0 && len(t.Standby) == 0 && len(t.Warmup) == 0
}

func (t TaskSets) equal(o TaskSets) bool {
	return tasksEqual(t.Active, o.Active) && tasksEqual(t.Standby, o.Standby) && tasksEqual(t.Warmup, o.Warmup)
}

// containsAny reports whether any task of o is in t, role by role.
func (t TaskSets) containsAny(o TaskSets) bool {
	return tasksContainsAny(t.Active, o.Active) || tasksContainsAny(t.Standby, o.Standby) || tasksContainsAny(t.Warmup, o.Warmup)
}

func tasksEqual(a, b Tasks) bool {
	if len(a) != len(b) {
		return false
	}
	for s, pa := range a {
		pb, ok := b[s]
		if !ok || !slices.Equal(pa, pb) {
			return false
		}
	}
	return true
}

func tasksContains(t Tasks, subtopology string, partition int32) bool {
	ps := t[subtopology]
	_, found := slices.BinarySearch(ps, partition)
	return found
}

func tasksContainsAny(a, b Tasks) bool {
	for s, pb := range b {
		pa := a[s]
		if len(pa) == 0 {
			continue
		}
		for _, p := range pb {
			if _, found := slices.BinarySearch(pa, p); found {
				return true
			}
		}
	}
	return false
}

// tasksSubset reports whether every task of a is in b.
func tasksSubset(a, b Tasks) bool {
	for s, pa := range a {
		pb := b[s]
		for _, p := range pa {
			if _, found := slices.BinarySearch(pb, p); !found {
				return false
			}
		}
	}
	return true
}

func tasksCount(t Tasks) int {
	n := 0
	for _, ps := range t {
		n += len(ps)
	}
	return n
}

// tasksBuilder accumulates tasks and normalizes them once.
type tasksBuilder map[string][]int32

func (b tasksBuilder) add(subtopology string, partition int32) {
	b[subtopology] = append(b[subtopology], partition)
}

func (b tasksBuilder) build() Tasks {
	if len(b) == 0 {
		return nil
	}
	out := make(Tasks, len(b))
	for s, ps := range b {
		if len(ps) == 0 {
			continue
		}
		ps = slices.Clone(ps)
		slices.Sort(ps)
		out[s] = slices.Compact(ps)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// normalizeTasks copies an assignor's output into the canonical form.
func normalizeTasks(t Tasks) Tasks {
	b := make(tasksBuilder, len(t))
	for s, ps := range t {
		for _, p := range ps {
			b.add(s, p)
		}
	}
	return b.build()
}

func tasksFromKmsg(in []kmsg.TaskIDs) Tasks {
	if len(in) == 0 {
		return nil
	}
	b := make(tasksBuilder, len(in))
	for _, t := range in {
		for _, p := range t.Partitions {
			b.add(t.SubtopologyID, p)
		}
	}
	return b.build()
}

// tasksToKmsg renders tasks sorted by subtopology id. The result is never nil:
// a response with task lists must carry all three, even when empty.
func tasksToKmsg(t Tasks) []kmsg.TaskIDs {
	out := make([]kmsg.TaskIDs, 0, len(t))
	for _, s := range sortedSubtopologies(t) {
		out = append(out, kmsg.TaskIDs{SubtopologyID: s, Partitions: slices.Clone(t[s])})
	}
	return out
}

func sortedSubtopologies(t Tasks) []string {
	ids := make([]string, 0, len(t))
	for s := range t {
		ids = append(ids, s)
	}
	sort.Strings(ids)
	return ids
}

// tasksMinus returns a − b.
func tasksMinus(a, b Tasks) Tasks {
	bld := tasksBuilder{}
	for s, pa := range a {
		pb := b[s]
		for _, p := range pa {
			if _, found := slices.BinarySearch(pb, p); !found {
				bld.add(s, p)
			}
		}
	}
	return bld.build()
}

// tasksUnion returns a ∪ b.
func tasksUnion(a, b Tasks) Tasks {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	bld := tasksBuilder{}
	for s, ps := range a {
		for _, p := range ps {
			bld.add(s, p)
		}
	}
	for s, ps := range b {
		for _, p := range ps {
			bld.add(s, p)
		}
	}
	return bld.build()
}

func forEachTask(t Tasks, f func(TaskID)) {
	for s, ps := range t {
		for _, p := range ps {
			f(TaskID{s, p})
		}
	}
}
