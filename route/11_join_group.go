package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// joinGroup routes JoinGroup at the upstream's versions, unadvertised, with
// the migration on only: the gate, then the translator for a group the
// coordinator may serve (translate/11_join_group.go), else upstream at once
// (classic). A JoinGroup of a group not served here that carries a member
// id the translator gave out goes upstream without it (ForwardJoin): the
// broker would not know that id.
func (rs *Routes) joinGroup(req *proxy.Request, r *kmsg.JoinGroupRequest, out proxy.Outcome) {
	rs.mig.classic(req, out, r.Group)
}
