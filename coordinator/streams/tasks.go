package streams

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

func (t TaskSets) IsEmpty() bool {
	return len(t.Active) == 0 && len(t.Standby) == 0 && len(t.Warmup) == 0
}

func (t TaskSets) Equal(o TaskSets) bool {
	return TasksEqual(t.Active, o.Active) && TasksEqual(t.Standby, o.Standby) && TasksEqual(t.Warmup, o.Warmup)
}

// containsAny reports whether any task of o is in t, role by role.
func (t TaskSets) containsAny(o TaskSets) bool {
	return TasksContainsAny(t.Active, o.Active) || TasksContainsAny(t.Standby, o.Standby) || TasksContainsAny(t.Warmup, o.Warmup)
}

func TasksEqual(a, b Tasks) bool {
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

func TasksContains(t Tasks, subtopology string, partition int32) bool {
	ps := t[subtopology]
	_, found := slices.BinarySearch(ps, partition)
	return found
}

func TasksContainsAny(a, b Tasks) bool {
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

func TasksCount(t Tasks) int {
	n := 0
	for _, ps := range t {
		n += len(ps)
	}
	return n
}

// TasksBuilder accumulates tasks and normalizes them once.
type TasksBuilder map[string][]int32

func (b TasksBuilder) Add(subtopology string, partition int32) {
	b[subtopology] = append(b[subtopology], partition)
}

func (b TasksBuilder) Build() Tasks {
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

// NormalizeTasks copies an assignor's output into the canonical form.
func NormalizeTasks(t Tasks) Tasks {
	b := make(TasksBuilder, len(t))
	for s, ps := range t {
		for _, p := range ps {
			b.Add(s, p)
		}
	}
	return b.Build()
}

func TasksFromKmsg(in []kmsg.TaskIDs) Tasks {
	if len(in) == 0 {
		return nil
	}
	b := make(TasksBuilder, len(in))
	for _, t := range in {
		for _, p := range t.Partitions {
			b.Add(t.SubtopologyID, p)
		}
	}
	return b.Build()
}

// TasksToKmsg renders tasks sorted by subtopology id. The result is never nil:
// a response with task lists must carry all three, even when empty.
func TasksToKmsg(t Tasks) []kmsg.TaskIDs {
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

// TasksMinus returns a − b.
func TasksMinus(a, b Tasks) Tasks {
	bld := TasksBuilder{}
	for s, pa := range a {
		pb := b[s]
		for _, p := range pa {
			if _, found := slices.BinarySearch(pb, p); !found {
				bld.Add(s, p)
			}
		}
	}
	return bld.Build()
}

// TasksUnion returns a ∪ b.
func TasksUnion(a, b Tasks) Tasks {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	bld := TasksBuilder{}
	for s, ps := range a {
		for _, p := range ps {
			bld.Add(s, p)
		}
	}
	for s, ps := range b {
		for _, p := range ps {
			bld.Add(s, p)
		}
	}
	return bld.Build()
}

func ForEachTask(t Tasks, f func(TaskID)) {
	for s, ps := range t {
		for _, p := range ps {
			f(TaskID{s, p})
		}
	}
}
