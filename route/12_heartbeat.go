package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// heartbeat routes Heartbeat at the upstream's versions, unadvertised, with
// the migration on only: the gate, then the translator for a group the
// coordinator may serve (translate/12_heartbeat.go: a classic member is
// moved with REBALANCE_IN_PROGRESS only), else upstream at once (classic),
// where the answer feeds the ClassicObserver (generation, liveness).
func (rs *Routes) heartbeat(req *proxy.Request, r *kmsg.HeartbeatRequest, out proxy.Outcome) {
	rs.mig.classic(req, out, r.Group)
}
