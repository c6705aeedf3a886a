package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

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

// splitForward finishes a request of which local entries are answered
// here and upstream entries by the upstream. Without local entries the
// request goes upstream untouched; without upstream ones it is answered
// here; otherwise rest (the client's request with the upstream's entries
// only) goes upstream at version. merge adds the local answers to a
// response: the upstream's or, with no upstream entries, an empty one of
// the request's kind.
func splitForward[R kmsg.Response](req *proxy.Request, out proxy.Outcome, local, upstream int, rest func() kmsg.Request, version int16, merge func(R) R) {
	switch {
	case local == 0:
		out.Forward()
	case upstream == 0:
		out.Respond(merge(req.Body.ResponseKind().(R)))
	default:
		out.ForwardRewritten(rest(), version, func(resp kmsg.Response) kmsg.Response { return merge(resp.(R)) })
	}
}

// servedHere splits a request's entries: here[i] reports that entry i is
// answered here; upstream lists the others, in request order.
func servedHere[T any](entries []T, served func(T) bool) (here []bool, upstream []T) {
	here = make([]bool, len(entries))
	for i, e := range entries {
		if here[i] = served(e); !here[i] {
			upstream = append(upstream, e)
		}
	}
	return here, upstream
}

// answeredHere is the local of mergeByID and mergeByPosition: answer(i) for
// an entry answered here.
func answeredHere[T any](here []bool, answer func(i int) T) func(i int) (T, bool) {
	return func(i int) (T, bool) {
		if !here[i] {
			var none T
			return none, false
		}
		return answer(i), true
	}
}

// describedHere splits the groups of a describe (DescribeGroups,
// ConsumerGroupDescribe) into those this coordinator serves and the client
// may DESCRIBE (answered here; each group's queue is asked once) and the
// rest, forwarded upstream, where a denied group gets the broker's own
// GROUP_AUTHORIZATION_FAILED.
func (rs *Routes) describedHere(req *proxy.Request, groups []string) (here []bool, upstream []string) {
	var ownedIDs []string
	isOwned := map[string]bool{}
	for _, g := range groups {
		if _, seen := isOwned[g]; !seen {
			isOwned[g] = rs.o.Coordinator.Owns(g)
			if isOwned[g] {
				ownedIDs = append(ownedIDs, g)
			}
		}
	}
	denied := rs.groupsDenied(req, kmsg.ACLOperationDescribe, ownedIDs)
	return servedHere(groups, func(g string) bool { return isOwned[g] && !denied[g] })
}

// describeHereOrUpstream answers a describe of groups (DescribeGroups,
// ConsumerGroupDescribe): the groups described here (describedHere) get
// here(i), the rest go upstream (rest names them) at the newest version
// both speak, and the answers are merged in the request's order.
func describeHereOrUpstream[R kmsg.Response, G any](rs *Routes, req *proxy.Request, out proxy.Outcome, groups []string,
	rest func(upstream []string) kmsg.Request, here func(i int) G, answers func(R) *[]G, idOf func(G) string) {
	owned, upstream := rs.describedHere(req, groups)
	up := min(req.Version, rs.upstreamMax(req.Key))
	if len(upstream) == len(groups) && up < req.Version {
		out.ForwardRewritten(req.Body, up, nil)
		return
	}
	splitForward(req, out, len(groups)-len(upstream), len(upstream), func() kmsg.Request { return rest(upstream) }, up, func(r R) R {
		gs := answers(r)
		*gs = mergeByID(groups, answeredHere(owned, here), *gs, idOf)
		return r
	})
}
