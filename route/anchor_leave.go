package route

import "context"

// leaveAnchor removes the group's anchor member from the upstream group
// before a request that the anchor would make the broker refuse goes
// upstream: DeleteGroups of a deleted group, OffsetDelete of an Empty one.
// It waits at most AnchorLeaveTimeout. A failure is left for the forwarded
// request to report: the upstream then still sees the anchor.
func (rs *Routes) leaveAnchor(group string) {
	ctx, cancel := context.WithTimeout(context.Background(), rs.o.AnchorLeaveTimeout)
	defer cancel()
	_ = rs.o.Anchors.Leave(ctx, group)
}
