package proxyadapter

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/proxy"
)

// AdminOptions configure the admin RPCs of owned groups.
type AdminOptions struct {
	// LeaveAnchor removes the group's anchor member from the upstream group
	// (anchor.Manager.Leave), so that the DeleteGroups forwarded after it can
	// delete the group's committed offsets. Nil: no anchor to remove.
	LeaveAnchor func(ctx context.Context, groupID string) error
	// AnchorLeaveTimeout bounds LeaveAnchor (default 10 s).
	AnchorLeaveTimeout time.Duration
}

// RegisterAdmin routes the group admin RPCs of p through c: DescribeGroups,
// ListGroups, DeleteGroups, OffsetDelete, DescribeConfigs and
// IncrementalAlterConfigs. Requests about groups c owns are answered (or
// completed) locally; the rest go upstream untouched. None is advertised: the
// upstream's versions stand (capped to what kmsg decodes).
func RegisterAdmin(p *proxy.Proxy, c *coordinator.Coordinator, o AdminOptions) error {
	if o.AnchorLeaveTimeout <= 0 {
		o.AnchorLeaveTimeout = 10 * time.Second
	}
	a := &admin{c: c, o: o}
	for _, r := range []struct {
		key kmsg.Key
		f   func(*proxy.Request, proxy.Outcome)
	}{
		{kmsg.DescribeGroups, a.describeGroups},
		{kmsg.ListGroups, a.listGroups},
		{kmsg.DeleteGroups, a.deleteGroups},
		{kmsg.OffsetDelete, a.offsetDelete},
		{kmsg.DescribeConfigs, a.describeConfigs},
		{kmsg.IncrementalAlterConfigs, a.incrementalAlterConfigs},
	} {
		max := kmsg.RequestForKey(int16(r.key)).MaxVersion()
		if err := p.Register(int16(r.key), 0, max, false, proxy.InterceptorFunc(r.f)); err != nil {
			return fmt.Errorf("register admin rpcs: %w", err)
		}
	}
	return nil
}

// admin serves the group admin RPCs for owned groups.
type admin struct {
	c *coordinator.Coordinator
	o AdminOptions
}

// RegisterAdmin routes the group admin RPCs of p through the adapter's
// coordinator, with its anchors leaving on DeleteGroups (see RegisterAdmin).
func (a *Adapter) RegisterAdmin(p *proxy.Proxy) error {
	return RegisterAdmin(p, a.o.Coordinator, AdminOptions{LeaveAnchor: a.o.Anchors.Leave})
}
