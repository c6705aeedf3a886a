package route

import "github.com/streamshift/streamshift/proxy"

// clusterGate wraps the route of a gated key: the group a request routes
// by and the answer that refuses it are the row's (the key's facts,
// keys.go). A request for a group another instance
// owns is sent to that owner (forward) and its answer goes back to the
// client; a request for a group nobody owns right now gets
// COORDINATOR_NOT_AVAILABLE; one this instance owns but does not serve
// (loading, fenced) gets the cluster's error at once, before the
// migration gate, the coordinator or the upstream see it. Requests naming
// no single group (a batched OffsetFetch of an admin tool) pass: split by
// owner before (clusterSplit), they name groups owned here only, or none.
// A request that hopped here never hops again: the owner serves it or
// answers the error.
//
// In a mixed release (Hops false) the instances route as before: the
// classic keys and offsets of clients that are not host-routed
// (hostRouted) are served where they arrive, the others get
// NOT_COORDINATOR and find the owner's host.
func (rs *Routes) clusterGate(rt route, h handler) handler {
	if rs.o.Cluster == nil || rt.group == nil {
		return h
	}
	serve, gated, refuse := h.serve, rt.group, rt.refuse
	h.serve = func(req *proxy.Request, out proxy.Outcome) {
		c := rs.o.Cluster
		group, ok := gated(req.Body)
		if !ok {
			serve(req, out)
			return
		}
		if !req.Client.Remote() && c.Hops() {
			self, peer, gen, owned := c.Owner(group)
			switch {
			case !owned:
				out.Respond(refuse(req.Body, noOwner(group)))
				return
			case !self:
				go rs.forward(req, out, serve, refuse, group, peer, gen)
				return
			}
		} else if !req.Client.Remote() && !hostRouted(req.Client) && !streamsKey(req.Key) {
			serve(req, out)
			return
		}
		if err := c.Serving(group); err != nil {
			out.Respond(refuse(req.Body, err))
			return
		}
		serve(req, out)
	}
	return h
}
