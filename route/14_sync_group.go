package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// syncGroup routes SyncGroup at the upstream's versions, unadvertised, with
// the migration on only: the gate, then the translator for a group the
// coordinator may serve (translate/14_sync_group.go: the streams group
// assigns), else upstream at once (classic), where the answer feeds the
// ClassicObserver (generation).
func (rs *Routes) syncGroup(req *proxy.Request, r *kmsg.SyncGroupRequest, out proxy.Outcome) {
	rs.mig.classic(req, out, r.Group)
}
