package route

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
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
	// CoordinatorNode returns the upstream node coordinating a group (for
	// ListGroups: an owned group is listed by that broker only). Nil: every
	// broker lists it.
	CoordinatorNode func(ctx context.Context, groupID string) (int32, error)
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
// coordinator, with its anchors leaving on DeleteGroups and group
// coordinators found through the control-plane client ctl (see
// RegisterAdmin).
func (a *Adapter) RegisterAdmin(p *proxy.Proxy, ctl *kgo.Client) error {
	return RegisterAdmin(p, a.o.Coordinator, AdminOptions{LeaveAnchor: a.o.Anchors.Leave, CoordinatorNode: FindCoordinatorNode(ctl)})
}

// FindCoordinatorNode returns a CoordinatorNode asking the upstream with
// FindCoordinator through cl, answers cached for a minute (a group's
// coordinator moves only when __consumer_offsets leadership does).
func FindCoordinatorNode(cl *kgo.Client) func(ctx context.Context, groupID string) (int32, error) {
	type entry struct {
		node int32
		at   time.Time
	}
	var (
		mu    sync.Mutex
		cache = map[string]entry{}
	)
	return func(ctx context.Context, groupID string) (int32, error) {
		mu.Lock()
		e, ok := cache[groupID]
		mu.Unlock()
		if ok && time.Since(e.at) < time.Minute {
			return e.node, nil
		}
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorKeys = groupID, []string{groupID}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return 0, fmt.Errorf("find coordinator of %s: %w", groupID, err)
		}
		node, code := resp.NodeID, resp.ErrorCode
		if len(resp.Coordinators) > 0 {
			node, code = resp.Coordinators[0].NodeID, resp.Coordinators[0].ErrorCode
		}
		if err := kerr.ErrorForCode(code); err != nil {
			return 0, fmt.Errorf("find coordinator of %s: %w", groupID, err)
		}
		mu.Lock()
		cache[groupID] = entry{node, time.Now()}
		mu.Unlock()
		return node, nil
	}
}
