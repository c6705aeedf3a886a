package route

// Admin requests may mix what the proxy serves with what the upstream
// serves. The served entries are answered locally, the rest forwarded in one
// request, and the two answers merged back into the request's order, as a
// broker answers in request order.

// mergeByID merges per-group answers: ids are the request's group ids in
// order, local(i) answers entry i if the proxy serves it, and up holds the
// upstream's answers, matched by group id (a repeated id takes the next
// answer for it).
func mergeByID[T any](ids []string, local func(i int) (T, bool), up []T, idOf func(T) string) []T {
	byID := map[string][]T{}
	for _, g := range up {
		byID[idOf(g)] = append(byID[idOf(g)], g)
	}
	out := make([]T, 0, len(ids))
	for i, id := range ids {
		if g, ok := local(i); ok {
			out = append(out, g)
			continue
		}
		if q := byID[id]; len(q) > 0 {
			out = append(out, q[0])
			byID[id] = q[1:]
		}
	}
	return out
}

// mergeByPosition merges per-resource answers of n requested entries:
// local(i) answers entry i if the proxy serves it; the upstream's answers
// fill the other positions in order, and any extra upstream answers follow.
func mergeByPosition[T any](n int, local func(i int) (T, bool), up []T) []T {
	out := make([]T, 0, n)
	j := 0
	for i := 0; i < n; i++ {
		if r, ok := local(i); ok {
			out = append(out, r)
		} else if j < len(up) {
			out = append(out, up[j])
			j++
		}
	}
	return append(out, up[j:]...)
}
