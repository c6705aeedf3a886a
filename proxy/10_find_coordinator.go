package proxy

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rewriteFindCoordinator rewrites the coordinator endpoint of both layouts:
// v0-3 carry one coordinator in top-level fields, v4+ a batch (KIP-699). The
// (node id, host, port) triple must equal the node's Metadata entry because
// librdkafka overwrites its broker address with it and the Java client
// connects to it directly. A coordinator without a proxy port becomes
// COORDINATOR_NOT_AVAILABLE, which clients retry.
func rewriteFindCoordinator(t *nodeTable, r kmsg.Response) bool {
	resp := r.(*kmsg.FindCoordinatorResponse)
	if resp.Version < 4 {
		if resp.ErrorCode != 0 || resp.NodeID < 0 {
			return false
		}
		t.observe(resp.NodeID, resp.Host, resp.Port)
		host, port, ok := t.advertised(resp.NodeID)
		if !ok {
			resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
			msg := unmappedMessage(resp.NodeID)
			resp.ErrorMessage = &msg
			resp.NodeID, resp.Host, resp.Port = -1, "", -1
			return true
		}
		resp.Host, resp.Port = host, port
		return true
	}
	changed := false
	for i := range resp.Coordinators {
		c := &resp.Coordinators[i]
		if c.ErrorCode != 0 || c.NodeID < 0 {
			continue
		}
		changed = true
		t.observe(c.NodeID, c.Host, c.Port)
		host, port, ok := t.advertised(c.NodeID)
		if !ok {
			c.ErrorCode = kerr.CoordinatorNotAvailable.Code
			msg := unmappedMessage(c.NodeID)
			c.ErrorMessage = &msg
			c.NodeID, c.Host, c.Port = -1, "", -1
			continue
		}
		c.Host, c.Port = host, port
	}
	return changed
}

func unmappedMessage(node int32) string {
	return fmt.Sprintf("streamshift has no port for upstream node %d (outside its node id range)", node)
}
