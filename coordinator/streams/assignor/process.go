package assignor

// process is Kafka's ProcessState: the members sharing one process id, and
// the tasks they hold. A process never holds the same task twice, in any
// role; holders (per task, in the assignment state) answer hasTask.
type process struct {
	id        string
	members   []int32 // member indices, in member id order
	taskCount int32   // tasks of all roles held by the process
}

// loadLess reports whether process a carries a lower load than b, load
// being tasks per member (Kafka's ProcessState.load). Fractions are
// compared exactly, by cross-multiplication, instead of as doubles.
func loadLess(a, b *process) bool {
	return int64(a.taskCount)*int64(len(b.members)) < int64(b.taskCount)*int64(len(a.members))
}

// loadLE is loadLess or equal load.
func loadLE(a, b *process) bool {
	return int64(a.taskCount)*int64(len(b.members)) <= int64(b.taskCount)*int64(len(a.members))
}

// processHeap orders processes by load, ties by process id: Kafka's
// PriorityQueue<ProcessState> breaks ties by heap position, which is not
// deterministic across runs.
type processHeap struct {
	procs []*process
	idx   []int32 // process indices; procs[idx[i]]
}

func (h *processHeap) less(i, j int) bool {
	a, b := h.procs[h.idx[i]], h.procs[h.idx[j]]
	ab := int64(a.taskCount) * int64(len(b.members))
	ba := int64(b.taskCount) * int64(len(a.members))
	if ab != ba {
		return ab < ba
	}
	return h.idx[i] < h.idx[j] // process indices follow process id order
}

func (h *processHeap) init(procs []*process) {
	h.procs = procs
	h.idx = make([]int32, len(procs))
	for i := range procs {
		h.idx[i] = int32(i)
	}
	for i := len(h.idx)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *processHeap) len() int { return len(h.idx) }

func (h *processHeap) pop() int32 {
	n := len(h.idx) - 1
	h.idx[0], h.idx[n] = h.idx[n], h.idx[0]
	top := h.idx[n]
	h.idx = h.idx[:n]
	h.down(0)
	return top
}

func (h *processHeap) push(p int32) {
	h.idx = append(h.idx, p)
	h.up(len(h.idx) - 1)
}

func (h *processHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h.idx[i], h.idx[parent] = h.idx[parent], h.idx[i]
		i = parent
	}
}

func (h *processHeap) down(i int) {
	n := len(h.idx)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		small := l
		if r := l + 1; r < n && h.less(r, l) {
			small = r
		}
		if !h.less(small, i) {
			return
		}
		h.idx[i], h.idx[small] = h.idx[small], h.idx[i]
		i = small
	}
}
