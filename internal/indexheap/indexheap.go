// Package indexheap is the bookkeeping of a container/heap whose elements
// keep their own index, so that heap.Fix and heap.Remove can find them: the
// coordinator's manual clock's timers and the anchors' due queue. A heap
// type keeps its own Len and Less and passes its slice and its index
// setter here for Swap, Push and Pop. It imports nothing of the project.
package indexheap

// Swap swaps the elements i and j of s and tells each its new index.
func Swap[S ~[]T, T any](s S, i, j int, setIndex func(T, int)) {
	s[i], s[j] = s[j], s[i]
	setIndex(s[i], i)
	setIndex(s[j], j)
}

// Push appends x (a T) to *s at its index.
func Push[S ~[]T, T any](s *S, x any, setIndex func(T, int)) {
	e := x.(T)
	setIndex(e, len(*s))
	*s = append(*s, e)
}

// Pop takes the last element of *s off, its index -1 (out of the heap),
// and clears its slot so the slice does not keep it alive.
func Pop[S ~[]T, T any](s *S, setIndex func(T, int)) any {
	old := *s
	n := len(old) - 1
	e := old[n]
	var zero T
	old[n] = zero
	setIndex(e, -1)
	*s = old[:n]
	return e
}
