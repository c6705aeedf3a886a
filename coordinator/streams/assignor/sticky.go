package assignor

import (
	"fmt"
	"sort"
	"strconv"
)

// ConfigNumStandbyReplicas is the GroupSpec.Configs key of the number of
// standby replicas per stateful task.
const ConfigNumStandbyReplicas = "num.standby.replicas"

// StickyTaskAssignor is Kafka 4.4's StickyTaskAssignor ("sticky"): it keeps
// tasks where they were while balancing active tasks, then all tasks,
// across members, and places standby replicas of stateful tasks on other
// processes than the active one.
//
// Unlike Kafka's, which breaks ties by hash-map and heap order, it is
// deterministic: members are visited by process id then member id, and
// equally loaded processes or members are chosen in that order.
type StickyTaskAssignor struct{}

// Name is the assignor's name in group.streams.assignors.
func (StickyTaskAssignor) Name() string { return "sticky" }

var _ TaskAssignor = StickyTaskAssignor{}

// Assign computes the target assignment. It never modifies its inputs.
func (StickyTaskAssignor) Assign(spec GroupSpec, topology TopologyDescriber) (GroupAssignment, error) {
	standbys := 0
	if v, ok := spec.Configs[ConfigNumStandbyReplicas]; ok {
		n, err := strconv.ParseInt(v, 10, 32) // Java's Integer.parseInt
		if err != nil {
			return GroupAssignment{}, fmt.Errorf("sticky assignor: %s=%q: %w", ConfigNumStandbyReplicas, v, err)
		}
		standbys = int(max(n, 0))
	}
	s, err := newStickyState(spec, topology, standbys)
	if err != nil {
		return GroupAssignment{}, err
	}
	if err := s.assignActive(); err != nil {
		return GroupAssignment{}, err
	}
	if s.standbys > 0 {
		tags := ParseList(spec.Configs[ConfigRackAwareAssignmentTags])
		if len(tags) > 0 {
			s.initTags(spec, tags)
		}
		s.assignStandby(len(tags) > 0)
	}
	return s.groupAssignment(), nil
}

// stickyState is Kafka's LocalState plus the ProcessStates, over dense
// indices: tasks are numbered subtopology by subtopology (subtopologies in
// id order), partitions in order; members are numbered by (process id,
// member id); processes by process id.
type stickyState struct {
	standbys int

	subs      []Subtopology
	subStart  []int32 // first task index of each subtopology
	taskSub   []int32
	taskPart  []int32
	stateful  []bool // per task
	maxTasks  int32  // largest task count of a subtopology
	numTasks  int
	memberIDs []string
	memberPro []int32 // process of each member
	count     []int32 // tasks of all roles per member (memberToTaskCounts)
	procs     []*process

	prevActive   []int32 // previous active owner per task, or -1
	prevStandbyI []int32 // CSR offsets into prevStandbyM, per task
	prevStandbyM []int32 // ranked previous standby candidates

	activeOwner []int32 // per task, -1 until assigned
	slots       int     // standby slots per task
	standbyOf   []int32 // per task, slots member indices
	standbyN    []int32 // standbys assigned per task
	holders     []int32 // per task, 1+slots process indices
	holdersN    []int32

	// Quotas (Kafka's activeTasksPerMember and totalTasksPerMember), and
	// what they are computed from: both shrink as members fill up.
	totalActiveTasks, totalTasks                       int
	membersWithActiveCapacity, membersWithTaskCapacity int
	activeQuota, totalQuota                            int32

	// Rack-aware standbys (client_tags.go): the tag keys, each process's
	// interned value per key, and the number of values per key.
	tagKeys   []string
	tagVal    []int32
	tagValues []int32
}

func newStickyState(spec GroupSpec, topology TopologyDescriber, standbys int) (*stickyState, error) {
	s := &stickyState{standbys: standbys}
	if topology != nil {
		s.subs = append([]Subtopology(nil), topology.Subtopologies()...)
	}
	sort.Slice(s.subs, func(i, j int) bool { return s.subs[i].ID < s.subs[j].ID })
	subIndex := make(map[string]int32, len(s.subs))
	s.subStart = make([]int32, len(s.subs)+1)
	for i, sub := range s.subs {
		if _, dup := subIndex[sub.ID]; dup {
			return nil, fmt.Errorf("sticky assignor: subtopology %s described twice", sub.ID)
		}
		subIndex[sub.ID] = int32(i)
		n := max(sub.NumTasks, 0)
		s.subStart[i+1] = s.subStart[i] + n
		s.maxTasks = max(s.maxTasks, n)
		s.totalActiveTasks += int(n)
		s.totalTasks += int(n)
		if sub.Stateful {
			s.totalTasks += int(n) * standbys
		}
	}
	T := int(s.subStart[len(s.subs)])
	s.numTasks = T
	s.taskSub = make([]int32, T)
	s.taskPart = make([]int32, T)
	s.stateful = make([]bool, T)
	for i, sub := range s.subs {
		for p := s.subStart[i]; p < s.subStart[i+1]; p++ {
			s.taskSub[p] = int32(i)
			s.taskPart[p] = p - s.subStart[i]
			s.stateful[p] = sub.Stateful
		}
	}
	// task maps a previous task to its index; tasks of another topology
	// epoch (unknown subtopology or partition) get no stickiness.
	subRange := func(sub string) (start, n int32, ok bool) {
		i, ok := subIndex[sub]
		if !ok {
			return 0, 0, false
		}
		return s.subStart[i], s.subStart[i+1] - s.subStart[i], true
	}

	// Members by (process id, member id), processes by id.
	ids := make([]string, 0, len(spec.Members))
	for id := range spec.Members {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		pi, pj := spec.Members[ids[i]].ProcessID, spec.Members[ids[j]].ProcessID
		if pi != pj {
			return pi < pj
		}
		return ids[i] < ids[j]
	})
	s.memberIDs = ids
	s.memberPro = make([]int32, len(ids))
	s.count = make([]int32, len(ids))
	for m, id := range ids {
		pid := spec.Members[id].ProcessID
		if len(s.procs) == 0 || s.procs[len(s.procs)-1].id != pid {
			s.procs = append(s.procs, &process{id: pid})
		}
		p := len(s.procs) - 1
		s.procs[p].members = append(s.procs[p].members, int32(m))
		s.memberPro[m] = int32(p)
	}
	s.membersWithActiveCapacity = len(ids)
	s.membersWithTaskCapacity = len(ids)
	s.activeQuota = tasksPerMember(s.totalActiveTasks, s.membersWithActiveCapacity)
	s.totalQuota = tasksPerMember(s.totalTasks, s.membersWithTaskCapacity)

	s.prevActive = make([]int32, T)
	s.activeOwner = make([]int32, T)
	for t := range s.prevActive {
		s.prevActive[t] = -1
		s.activeOwner[t] = -1
	}
	// A task has at most one holder per process, so no more than
	// processes-1 standbys: size the per-task slots by that, whatever
	// number was requested (the quotas still count the requested number,
	// as Kafka's do).
	s.slots = max(min(standbys, len(s.procs)-1), 0)
	s.standbyOf = make([]int32, T*s.slots)
	s.standbyN = make([]int32, T)
	s.holders = make([]int32, T*(1+s.slots))
	s.holdersN = make([]int32, T)

	// Previous active owners (the last member wins a task claimed twice, as
	// in Kafka's map), and standby candidates: previous standbys first, then
	// members that only reported offsets for the task, each group most
	// caught-up first (Kafka 4.4's STANDBY_CANDIDATE_ORDER). The stable sort
	// keeps member order among equals.
	type candidate struct {
		task, member int32
		notPrev      bool
		offset       int64
	}
	var cands []candidate
	standbyOfMember := make([]int32, T) // member+1 whose standby task t is, to skip its offsets
	for m, id := range ids {
		ms := spec.Members[id]
		for sub, parts := range ms.ActiveTasks {
			start, n, ok := subRange(sub)
			for _, p := range parts {
				if ok && p >= 0 && p < n {
					s.prevActive[start+p] = int32(m)
				}
			}
		}
		// A warm-up counts as a previous standby (KAFKA-21001): the
		// member restores the task's state, and it is the one the
		// warm-up was for.
		for _, prev := range [2]Tasks{ms.StandbyTasks, ms.WarmupTasks} {
			for sub, parts := range prev {
				start, n, ok := subRange(sub)
				offsets := ms.TaskOffsets[sub]
				for _, p := range parts {
					if ok && p >= 0 && p < n && standbyOfMember[start+p] != int32(m)+1 {
						cands = append(cands, candidate{task: start + p, member: int32(m), offset: offsets[p]})
						standbyOfMember[start+p] = int32(m) + 1
					}
				}
			}
		}
		for sub, offsets := range ms.TaskOffsets {
			start, n, ok := subRange(sub)
			for p, off := range offsets {
				if !ok || p < 0 || p >= n || standbyOfMember[start+p] == int32(m)+1 {
					continue
				}
				cands = append(cands, candidate{task: start + p, member: int32(m), notPrev: true, offset: off})
			}
		}
	}
	// Bucket by task keeping member order, then rank each (small) bucket
	// with a stable insertion sort.
	s.prevStandbyI = make([]int32, T+1)
	for _, c := range cands {
		s.prevStandbyI[c.task+1]++
	}
	for t := 0; t < T; t++ {
		s.prevStandbyI[t+1] += s.prevStandbyI[t]
	}
	ranked := make([]candidate, len(cands))
	next := append([]int32(nil), s.prevStandbyI[:T]...)
	for _, c := range cands {
		ranked[next[c.task]] = c
		next[c.task]++
	}
	before := func(a, b candidate) bool {
		if a.notPrev != b.notPrev {
			return !a.notPrev
		}
		return a.offset > b.offset
	}
	s.prevStandbyM = make([]int32, 0, len(ranked))
	for t := 0; t < T; t++ {
		bucket := ranked[s.prevStandbyI[t]:s.prevStandbyI[t+1]]
		for i := 1; i < len(bucket); i++ {
			for j := i; j > 0 && before(bucket[j], bucket[j-1]); j-- {
				bucket[j], bucket[j-1] = bucket[j-1], bucket[j]
			}
		}
		s.prevStandbyI[t] = int32(len(s.prevStandbyM))
		for i, c := range bucket {
			if i > 0 && bucket[i-1].member == c.member {
				continue // a partition listed twice
			}
			s.prevStandbyM = append(s.prevStandbyM, c.member)
		}
	}
	s.prevStandbyI[T] = int32(len(s.prevStandbyM))
	return s, nil
}

// tasksPerMember is Kafka's computeTasksPerMember: ⌈tasks / members⌉.
func tasksPerMember(tasks, members int) int32 {
	if members == 0 {
		return 0
	}
	return int32((tasks + members - 1) / members)
}

func (s *stickyState) prevStandbys(t int32) []int32 {
	return s.prevStandbyM[s.prevStandbyI[t]:s.prevStandbyI[t+1]]
}

func (s *stickyState) hasTask(p, t int32) bool {
	base := int(t) * (1 + s.slots)
	for _, h := range s.holders[base : base+int(s.holdersN[t])] {
		if h == p {
			return true
		}
	}
	return false
}

// addTask gives task t to member m and returns the member's new task
// count (Kafka's ProcessState.addTask).
func (s *stickyState) addTask(m, t int32, active bool) int32 {
	p := s.memberPro[m]
	if active {
		s.activeOwner[t] = m
	} else {
		s.standbyOf[int(t)*s.slots+int(s.standbyN[t])] = m
		s.standbyN[t]++
	}
	s.holders[int(t)*(1+s.slots)+int(s.holdersN[t])] = p
	s.holdersN[t]++
	s.procs[p].taskCount++
	s.count[m]++
	return s.count[m]
}

// addTaskToLeastLoadedMember gives t to the process's member with the
// fewest tasks, the first by member id among equals.
func (s *stickyState) addTaskToLeastLoadedMember(p, t int32, active bool) int32 {
	best := int32(-1)
	for _, m := range s.procs[p].members {
		if best < 0 || s.count[m] < s.count[best] {
			best = m
		}
	}
	return s.addTask(best, t, active)
}

func (s *stickyState) maybeUpdateActiveQuota(n int32) {
	if n == s.activeQuota {
		s.membersWithActiveCapacity--
		s.totalActiveTasks -= int(n)
		s.activeQuota = tasksPerMember(s.totalActiveTasks, s.membersWithActiveCapacity)
	}
}

func (s *stickyState) maybeUpdateTotalQuota(n int32) {
	if n == s.totalQuota {
		s.membersWithTaskCapacity--
		s.totalTasks -= int(n)
		s.totalQuota = tasksPerMember(s.totalTasks, s.membersWithTaskCapacity)
	}
}

// findPrevMemberWithLeastLoad walks ranked candidates and keeps the first
// unless a later one has both a strictly lower process load and a strictly
// lower member load (Kafka 4.4). With ok set, members whose process it
// refuses are passed over.
func (s *stickyState) findPrevMemberWithLeastLoad(cands []int32, ok func(p int32) bool) int32 {
	best := int32(-1)
	for _, m := range cands {
		p := s.memberPro[m]
		if ok != nil && !ok(p) {
			continue
		}
		if best < 0 || (loadLess(s.procs[p], s.procs[s.memberPro[best]]) && s.count[m] < s.count[best]) {
			best = m
		}
	}
	return best
}

// assignActive is Kafka's assignActive: previous owners under the active
// quota keep their tasks, then previous standbys take theirs, then the
// rest goes to the least-loaded process and its least-loaded member.
func (s *stickyState) assignActive() error {
	// Kafka sorts by (partition, subtopology) for the sticky passes, hoping
	// that a range-like previous assignment pairs equal partitions.
	byPartition := make([]int32, 0, s.numTasks)
	for p := int32(0); p < s.maxTasks; p++ {
		for i := range s.subs {
			if t := s.subStart[i] + p; t < s.subStart[i+1] {
				byPartition = append(byPartition, t)
			}
		}
	}

	remaining := byPartition[:0:0]
	for _, t := range byPartition {
		if m := s.prevActive[t]; m >= 0 && s.count[m] < s.activeQuota {
			s.assignActiveTask(m, t)
			continue
		}
		remaining = append(remaining, t)
	}

	rest := remaining[:0]
	for _, t := range remaining {
		m := s.findPrevMemberWithLeastLoad(s.prevStandbys(t), nil)
		if m >= 0 && s.count[m] < s.activeQuota {
			s.assignActiveTask(m, t)
			continue
		}
		rest = append(rest, t)
	}

	if len(rest) == 0 {
		return nil
	}
	// The rest in (subtopology, partition) order, which is task order,
	// for a range-like initial assignment.
	pending := make([]bool, s.numTasks)
	for _, t := range rest {
		pending[t] = true
	}
	rest = rest[:0]
	for t := range pending {
		if pending[t] {
			rest = append(rest, int32(t))
		}
	}
	if len(s.procs) == 0 {
		return fmt.Errorf("sticky assignor: no process available to assign active task %s", s.taskString(rest[0]))
	}
	var h processHeap
	h.init(s.procs)
	for _, t := range rest {
		p := h.pop()
		n := s.addTaskToLeastLoadedMember(p, t, true)
		s.maybeUpdateActiveQuota(n)
		s.maybeUpdateTotalQuota(n)
		h.push(p)
	}
	return nil
}

func (s *stickyState) assignActiveTask(m, t int32) {
	n := s.addTask(m, t, true)
	s.maybeUpdateActiveQuota(n)
	s.maybeUpdateTotalQuota(n)
}

// assignStandby is Kafka's assignStandby: per stateful task and replica,
// the previous active owner, then the best previous standby candidate,
// each only if its process lacks the task and it is under the total quota;
// the remaining replicas go to the least-loaded processes lacking the task.
// Replicas no process can take are dropped, as Kafka does (with a warning).
// With rack-aware tags (client_tags.go) every choice also needs distinct
// tags, except the last resort: the least-loaded process lacking the task.
func (s *stickyState) assignStandby(byTags bool) {
	// Replicas left for the least-loaded pass, per task.
	remaining := make([]int32, s.numTasks)
	anyRemaining := false
	var t int32 // the task being placed, for takes
	takes := func(p int32) bool { return !s.hasTask(p, t) && (!byTags || s.tagsDistinct(p, t)) }

	s.eachStatefulTaskDescending(func(task int32) {
		t = task
		for r := 0; r < s.standbys; r++ {
			if m := s.prevActive[t]; m >= 0 && takes(s.memberPro[m]) && s.count[m] < s.totalQuota {
				s.maybeUpdateTotalQuota(s.addTask(m, t, false))
				continue
			}
			if m := s.findPrevMemberWithLeastLoad(s.prevStandbys(t), takes); m >= 0 && s.count[m] < s.totalQuota {
				s.maybeUpdateTotalQuota(s.addTask(m, t, false))
				continue
			}
			remaining[t] = int32(s.standbys - r)
			anyRemaining = true
			break
		}
	})

	if !anyRemaining || len(s.procs) == 0 {
		return
	}
	var h processHeap
	h.init(s.procs)
	popped := make([]int32, 0, s.slots+2)
	// Descending (subtopology, partition), i.e. descending task index.
	for t = int32(s.numTasks) - 1; t >= 0; t-- {
		for r := 0; r < int(remaining[t]); r++ {
			// The least-loaded process that takes the task; else the
			// least-loaded one lacking it.
			popped = popped[:0]
			pick, fallback := int32(-1), int32(-1)
			for h.len() > 0 {
				p := h.pop()
				popped = append(popped, p)
				if s.hasTask(p, t) {
					continue
				}
				if fallback < 0 {
					fallback = p
				}
				if takes(p) {
					pick = p
					break
				}
			}
			if pick < 0 {
				pick = fallback
			}
			if pick >= 0 {
				s.maybeUpdateTotalQuota(s.addTaskToLeastLoadedMember(pick, t, false))
			}
			for _, p := range popped {
				h.push(p)
			}
			if pick < 0 {
				break // not enough processes for this many replicas
			}
		}
	}
}

// eachStatefulTaskDescending calls f for every stateful task in descending
// (partition, subtopology) order, Kafka's order of standby placement.
func (s *stickyState) eachStatefulTaskDescending(f func(t int32)) {
	for p := s.maxTasks - 1; p >= 0; p-- {
		for i := len(s.subs) - 1; i >= 0; i-- {
			if t := s.subStart[i] + p; t < s.subStart[i+1] && s.stateful[t] {
				f(t)
			}
		}
	}
}

func (s *stickyState) taskString(t int32) string {
	return fmt.Sprintf("%s_%d", s.subs[s.taskSub[t]].ID, s.taskPart[t])
}

// groupAssignment builds the result: an entry for every member, tasks
// grouped by subtopology with partitions ascending. All partition lists
// share one backing array (each capped, so appending to one cannot
// overwrite another), which keeps a 10,000-task assignment to a few
// allocations per member.
func (s *stickyState) groupAssignment() GroupAssignment {
	M := len(s.memberIDs)
	out := GroupAssignment{Members: make(map[string]MemberAssignment, M)}

	// Counting sort of (member, task) pairs by member; tasks stay in task
	// order, so each member's tasks of one subtopology are contiguous.
	activeStart := make([]int32, M+1)
	standbyStart := make([]int32, M+1)
	for t := 0; t < s.numTasks; t++ {
		if m := s.activeOwner[t]; m >= 0 {
			activeStart[m+1]++
		}
		for _, m := range s.standbyOf[t*s.slots : t*s.slots+int(s.standbyN[t])] {
			standbyStart[m+1]++
		}
	}
	for m := 0; m < M; m++ {
		activeStart[m+1] += activeStart[m]
		standbyStart[m+1] += standbyStart[m]
	}
	activeTasks := make([]int32, activeStart[M])
	standbyTasks := make([]int32, standbyStart[M])
	nextA := append([]int32(nil), activeStart[:M]...)
	nextS := append([]int32(nil), standbyStart[:M]...)
	for t := 0; t < s.numTasks; t++ {
		if m := s.activeOwner[t]; m >= 0 {
			activeTasks[nextA[m]] = int32(t)
			nextA[m]++
		}
		for _, m := range s.standbyOf[t*s.slots : t*s.slots+int(s.standbyN[t])] {
			standbyTasks[nextS[m]] = int32(t)
			nextS[m]++
		}
	}

	// toTasks turns a run of task indices into partitions in place.
	toTasks := func(tasks []int32) Tasks {
		if len(tasks) == 0 {
			return nil
		}
		runs := 1
		for i := 1; i < len(tasks); i++ {
			if s.taskSub[tasks[i]] != s.taskSub[tasks[i-1]] {
				runs++
			}
		}
		ts := make(Tasks, runs)
		for i := 0; i < len(tasks); {
			sub := s.taskSub[tasks[i]]
			j := i
			for ; j < len(tasks) && s.taskSub[tasks[j]] == sub; j++ {
				tasks[j] = s.taskPart[tasks[j]]
			}
			ts[s.subs[sub].ID] = tasks[i:j:j]
			i = j
		}
		return ts
	}
	for m, id := range s.memberIDs {
		out.Members[id] = MemberAssignment{
			ActiveTasks:  toTasks(activeTasks[activeStart[m]:activeStart[m+1]]),
			StandbyTasks: toTasks(standbyTasks[standbyStart[m]:standbyStart[m+1]]),
		}
	}
	return out
}
