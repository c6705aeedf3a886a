package route

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// FindCoordinator (key 10): v0-v6 (all kmsg knows), routed only with
// several instances (Options.Cluster), unadvertised.
//
// By version: v0-v3 answer one coordinator in top-level fields, v4+ a batch
// of keys (KIP-699); both get the same rewrite.
//
// Two files serve key 10, on purpose: proxy/10_find_coordinator.go points
// every forwarded FindCoordinator at the proxy's port of the node (with one
// instance this route is not registered and the proxy's rewrite is all
// there is); this file, with several instances, also names the instance
// owning each group (RewriteFindCoordinator, then ownerHost).

// coordinatorTypeGroup is FindCoordinator's key type of a consumer group.
const coordinatorTypeGroup = 0

// findCoordinator serves FindCoordinator (all versions) when several
// instances share the groups (Options.Cluster): the request goes upstream
// on the client's own connection, the proxy rewrites the coordinator to
// its port for that node, as for every FindCoordinator, and a group's
// coordinator host becomes the advertised host of the instance owning the
// group: the port stays that of the group's upstream coordinator node (the
// same port-per-node mapping on every instance), so the group's requests
// reach the owner on the connection it forwards to the right broker; the
// node id may be the owner's own (Cluster.Coordinator).
// Transaction coordinators (and other key types) are any instance's, and
// so are the groups of clients that are not host-routed (cluster.go), and
// every group once all instances hop requests to the owner (Hops): the
// owner's host and node id are only named during an upgrade from a
// release without the internal links.
func (rs *Routes) findCoordinator(req *proxy.Request, r *kmsg.FindCoordinatorRequest, out proxy.Outcome) {
	p := rs.p
	out.ForwardRewritten(r, req.Version, func(resp kmsg.Response) kmsg.Response {
		fr := resp.(*kmsg.FindCoordinatorResponse)
		p.RewriteFindCoordinator(fr)
		if r.CoordinatorType != coordinatorTypeGroup || !hostRouted(req.Client) || rs.o.Cluster.Hops() {
			// Answered as by a single instance: the broker's
			// coordinator node at this proxy's port for it. Other
			// clients' groups always were (cluster.go: clusterGate);
			// once every instance hops requests to their owner, every
			// client's are: whichever instance a request reaches sends
			// it on to the owner, so every instance may share one
			// advertised host (a load balancer's).
			return fr
		}
		if req.Version < 4 {
			c := kmsg.FindCoordinatorResponseCoordinator{NodeID: fr.NodeID, Host: fr.Host, Port: fr.Port, ErrorCode: fr.ErrorCode, ErrorMessage: fr.ErrorMessage}
			rs.ownerHost(r.CoordinatorKey, &c)
			fr.NodeID, fr.Host, fr.Port, fr.ErrorCode, fr.ErrorMessage = c.NodeID, c.Host, c.Port, c.ErrorCode, c.ErrorMessage
			return fr
		}
		for i := range fr.Coordinators {
			rs.ownerHost(fr.Coordinators[i].Key, &fr.Coordinators[i])
		}
		return fr
	})
}

// ownerHost points one group coordinator at its owner's host; while the
// group's partition has no owner (it moves) the client gets the retriable
// COORDINATOR_NOT_AVAILABLE.
func (rs *Routes) ownerHost(group string, c *kmsg.FindCoordinatorResponseCoordinator) {
	if c.ErrorCode != 0 || c.NodeID < 0 {
		return
	}
	host, id, ok := rs.o.Cluster.Coordinator(group, c.NodeID)
	if !ok {
		msg := fmt.Sprintf("group %s: no streamshift instance owns its log partition right now (it moves)", group)
		c.NodeID, c.Host, c.Port, c.ErrorCode, c.ErrorMessage = -1, "", -1, kerr.CoordinatorNotAvailable.Code, &msg
		return
	}
	c.Host, c.NodeID = host, id
}
