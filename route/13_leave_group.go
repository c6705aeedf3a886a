package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// leaveGroup routes LeaveGroup at the upstream's versions, unadvertised,
// with the migration on only: the gate, then the translator for a group the
// coordinator may serve (translate/13_leave_group.go), else upstream at once
// (classic).
func (rs *Routes) leaveGroup(req *proxy.Request, r *kmsg.LeaveGroupRequest, out proxy.Outcome) {
	rs.mig.classic(req, out, r.Group)
}
