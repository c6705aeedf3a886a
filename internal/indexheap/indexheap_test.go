package indexheap

import (
	"container/heap"
	"testing"
)

type item struct{ v, index int }

type items []*item

func (h items) Len() int           { return len(h) }
func (h items) Less(i, j int) bool { return h[i].v < h[j].v }
func (h items) Swap(i, j int)      { Swap(h, i, j, setIndex) }
func (h *items) Push(x any)        { Push(h, x, setIndex) }
func (h *items) Pop() any          { return Pop(h, setIndex) }

func setIndex(e *item, i int) { e.index = i }

// Every element knows its index, so heap.Remove and heap.Fix find it;
// a popped one is out (-1).
func TestIndexKept(t *testing.T) {
	var h items
	all := make([]*item, 10)
	for i := range all {
		all[i] = &item{v: (i * 7) % 10}
		heap.Push(&h, all[i])
	}
	check := func() {
		for i, e := range h {
			if e.index != i {
				t.Fatalf("element %d says index %d", i, e.index)
			}
		}
	}
	check()
	heap.Remove(&h, all[3].index)
	if all[3].index != -1 {
		t.Fatalf("removed element's index %d", all[3].index)
	}
	check()
	all[5].v = -1
	heap.Fix(&h, all[5].index)
	if e := heap.Pop(&h).(*item); e != all[5] || e.index != -1 {
		t.Fatalf("popped %+v, want the fixed element out of the heap", e)
	}
	check()
	prev := -2
	for h.Len() > 0 {
		e := heap.Pop(&h).(*item)
		if e.v < prev {
			t.Fatalf("popped %d after %d", e.v, prev)
		}
		prev = e.v
	}
}
