package proxy

import (
	"maps"
	"net"
	"strconv"
	"sync"

	"github.com/rs/zerolog"
)

// nodeTable maps upstream node ids to the upstream's own address (where the
// proxy dials) and to the proxy's address for that node (what clients see).
//
// The client-facing mapping is deterministic, port = nodePortBase + nodeID, so
// every proxy instance and every restart advertises the same endpoints that
// clients may have cached; only the upstream side is learned, from the
// control-plane metadata fetch and from every address-carrying response.
type nodeTable struct {
	advertisedHost string
	portBase       int
	minID, maxID   int32
	log            zerolog.Logger

	mu       sync.RWMutex
	upstream map[int32]string // node id -> upstream host:port
	unmapped map[int32]bool   // node ids already reported as having no port
}

func newNodeTable(advertisedHost string, portBase int, minID, maxID int32, log zerolog.Logger) *nodeTable {
	return &nodeTable{
		advertisedHost: advertisedHost,
		portBase:       portBase,
		minID:          minID,
		maxID:          maxID,
		log:            log,
		upstream:       make(map[int32]string),
		unmapped:       make(map[int32]bool),
	}
}

// hasPort says whether the proxy listens for this node.
func (t *nodeTable) hasPort(id int32) bool { return id >= t.minID && id <= t.maxID }

// advertised returns the endpoint clients are told for node id. ok is false
// (and the omission logged once per node) when the node lies outside the
// pre-bound port range: handing out the upstream address instead would let the
// client bypass the proxy silently.
func (t *nodeTable) advertised(id int32) (host string, port int32, ok bool) {
	if !t.hasPort(id) {
		t.reportUnmapped(id)
		return "", 0, false
	}
	return t.advertisedHost, int32(t.portBase + int(id)), true
}

func (t *nodeTable) reportUnmapped(id int32) {
	t.mu.Lock()
	seen := t.unmapped[id]
	t.unmapped[id] = true
	up := t.upstream[id]
	t.mu.Unlock()
	if !seen {
		t.log.Error().Int32("node", id).Str("upstream", up).
			Int32("node_id_min", t.minID).Int32("node_id_max", t.maxID).
			Msg("upstream node has no proxy port (outside node-id-min..node-id-max); it is hidden from clients: widen the node id range")
	}
}

// observe records the upstream address of a node as seen in a response.
func (t *nodeTable) observe(id int32, host string, port int32) {
	if id < 0 || host == "" || port <= 0 {
		return
	}
	addr := net.JoinHostPort(host, strconv.Itoa(int(port)))
	t.mu.RLock()
	cur := t.upstream[id]
	t.mu.RUnlock()
	if cur == addr {
		return
	}
	t.mu.Lock()
	t.upstream[id] = addr
	t.mu.Unlock()
	ev := t.log.Info()
	if cur != "" {
		ev = t.log.Warn().Str("previous", cur)
	}
	ev.Int32("node", id).Str("upstream", addr).Msg("upstream node address learned")
	if !t.hasPort(id) {
		t.reportUnmapped(id)
	}
}

// lookup returns the upstream address of node id.
func (t *nodeTable) lookup(id int32) (string, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	a, ok := t.upstream[id]
	return a, ok
}

// snapshot returns a copy of the upstream table.
func (t *nodeTable) snapshot() map[int32]string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return maps.Clone(t.upstream)
}
