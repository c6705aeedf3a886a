package proxy

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FindCoordinator (key 10): every forwarded response, all versions: v0-v3
// answer one coordinator in top-level fields, v4+ a batch (KIP-699); both
// are rewritten to the proxy's ports.
//
// Two files serve key 10, on purpose: this one rewrites addresses for every
// instance; route/10_find_coordinator.go, registered only with several
// instances, also names the instance owning each group, and calls this
// rewrite (RewriteFindCoordinator) because the proxy does not rewrite the
// responses of requests an interceptor forwarded itself.

// rewriteFindCoordinator rewrites the coordinator endpoint of both layouts:
// v0-3 carry one coordinator in top-level fields, v4+ a batch (KIP-699) of
// entries with the same fields. The (node id, host, port) triple must equal
// the node's Metadata entry because librdkafka overwrites its broker address
// with it and the Java client connects to it directly.
func rewriteFindCoordinator(t *nodeTable, r kmsg.Response) bool {
	resp := r.(*kmsg.FindCoordinatorResponse)
	if resp.Version < 4 {
		c := kmsg.FindCoordinatorResponseCoordinator{NodeID: resp.NodeID, Host: resp.Host, Port: resp.Port,
			ErrorCode: resp.ErrorCode, ErrorMessage: resp.ErrorMessage}
		if !rewriteCoordinator(t, &c) {
			return false
		}
		resp.NodeID, resp.Host, resp.Port, resp.ErrorCode, resp.ErrorMessage = c.NodeID, c.Host, c.Port, c.ErrorCode, c.ErrorMessage
		return true
	}
	changed := false
	for i := range resp.Coordinators {
		changed = rewriteCoordinator(t, &resp.Coordinators[i]) || changed
	}
	return changed
}

// rewriteCoordinator points one coordinator at the proxy's port for its node
// and says whether it changed it (an error or a negative node id is left as
// is). A coordinator without a proxy port becomes COORDINATOR_NOT_AVAILABLE,
// which clients retry.
func rewriteCoordinator(t *nodeTable, c *kmsg.FindCoordinatorResponseCoordinator) bool {
	if c.ErrorCode != 0 || c.NodeID < 0 {
		return false
	}
	t.observe(c.NodeID, c.Host, c.Port)
	host, port, ok := t.advertised(c.NodeID)
	if !ok {
		c.ErrorCode = kerr.CoordinatorNotAvailable.Code
		msg := unmappedMessage(c.NodeID)
		c.ErrorMessage = &msg
		c.NodeID, c.Host, c.Port = -1, "", -1
		return true
	}
	c.Host, c.Port = host, port
	return true
}

func unmappedMessage(node int32) string {
	return fmt.Sprintf("streamshift has no port for upstream node %d (outside its node id range)", node)
}

// RewriteFindCoordinator points the coordinators of a FindCoordinator
// response an interceptor forwarded (ForwardRewritten, whose responses the
// proxy does not rewrite itself) at the proxy's ports, as for every
// forwarded FindCoordinator.
func (p *Proxy) RewriteFindCoordinator(resp *kmsg.FindCoordinatorResponse) {
	rewriteFindCoordinator(p.nodes, resp)
}
