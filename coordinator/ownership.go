package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// UpstreamGroups describes a group of the upstream cluster; upstream.Groups
// implements it. The group's error code is the claim's to read; the error is
// a request that failed.
type UpstreamGroups interface {
	DescribeUpstreamGroup(ctx context.Context, group string) (kmsg.DescribeGroupsResponseGroup, error)
}

// Takeover moves a live classic group of the upstream into the proxy (online
// migration). It returns nil once the group is the proxy's, or the error the
// joining streams member gets. Ownership without a Takeover refuses such
// groups with GROUP_ID_NOT_FOUND, as Kafka does.
type Takeover interface {
	Takeover(ctx context.Context, upstream kmsg.DescribeGroupsResponseGroup) error
}

// AnchorProtocol is the protocol name of the proxy's anchor member in the
// upstream classic group of an owned group (package upstream/anchor).
const AnchorProtocol = "streamshift"

// Ownership decides which groups the proxy serves. A group is the proxy's
// once the coordinator holds it: its records, starting with the
// RecordOwnership its first join wrote. A streams-protocol join of a group
// the coordinator does not hold claims it after asking the upstream: a group
// the upstream does not know, an Empty classic group (offline migration: its
// offsets stay), or one whose only members are streamshift anchors (a
// restarted proxy) becomes the proxy's; a live classic group goes to
// Takeover. A claim waits in the coordinator until the join creating the
// group records it.
type Ownership struct {
	c        *Coordinator
	upstream UpstreamGroups
	takeover Takeover

	mu       sync.Mutex
	inflight map[string]*claim
}

type claim struct {
	done chan struct{}
	err  error
}

// NewOwnership returns the ownership table of c, asking upstream about the
// groups; takeover may be nil.
func NewOwnership(c *Coordinator, upstream UpstreamGroups, takeover Takeover) *Ownership {
	return &Ownership{c: c, upstream: upstream, takeover: takeover, inflight: map[string]*claim{}}
}

// SetTakeover installs the online-migration hook.
func (o *Ownership) SetTakeover(t Takeover) {
	o.mu.Lock()
	o.takeover = t
	o.mu.Unlock()
}

// Owns reports whether the proxy serves the group. It may wait for the
// group's queue; call it off the proxy's event loops.
func (o *Ownership) Owns(group string) bool {
	return o.c.claimed(group) || o.c.Owns(group)
}

// Claim makes the group the proxy's if the upstream allows it, asking the
// upstream once however many members join at the same time. It blocks on
// the upstream: call it off the event loops and off the group's queue. The
// error carries the Kafka error the joining member gets.
func (o *Ownership) Claim(ctx context.Context, group string) error {
	if o.c.claimed(group) {
		return nil
	}
	o.mu.Lock()
	cl := o.inflight[group]
	if cl == nil {
		cl = &claim{done: make(chan struct{})}
		o.inflight[group] = cl
		o.mu.Unlock()
		var v *streams.OwnershipValue
		v, cl.err = o.decide(ctx, group)
		if cl.err == nil {
			v.ClaimedAtMs = o.c.clock.Now().UnixMilli()
			o.c.addClaim(group, v)
		}
		o.mu.Lock()
		delete(o.inflight, group)
		close(cl.done)
		o.mu.Unlock()
		return cl.err
	}
	o.mu.Unlock()
	select {
	case <-cl.done:
		return cl.err
	case <-ctx.Done():
		return fmt.Errorf("claim group %s: %v: %w", group, ctx.Err(), kerr.CoordinatorNotAvailable)
	}
}

func (o *Ownership) decide(ctx context.Context, group string) (*streams.OwnershipValue, error) {
	g, err := o.upstream.DescribeUpstreamGroup(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, kerr.CoordinatorNotAvailable)
	}
	switch err := kerr.ErrorForCode(g.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.GroupIDNotFound):
		// A 4.x upstream's answer for a group it does not know as classic.
		return &streams.OwnershipValue{Source: streams.OwnershipNew, UpstreamState: "Dead"}, nil
	case errors.Is(err, kerr.GroupAuthorizationFailed):
		return nil, fmt.Errorf("the proxy may not describe upstream group %s: %w", group, err)
	default:
		// NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, ...: retriable for
		// the member; the control-plane client finds the coordinator again.
		return nil, fmt.Errorf("describe upstream group %s: %v: %w", group, err, kerr.CoordinatorNotAvailable)
	}
	if src := claimSource(g); src != "" {
		return &streams.OwnershipValue{Source: src, UpstreamState: g.State}, nil
	}
	o.mu.Lock()
	t := o.takeover
	o.mu.Unlock()
	if t != nil {
		if err := t.Takeover(ctx, g); err != nil {
			return nil, err
		}
		return &streams.OwnershipValue{Source: streams.OwnershipTakeover, UpstreamState: g.State}, nil
	}
	return nil, fmt.Errorf("Group %s is a live classic group (state %s, protocol type %q) upstream; online migration of classic groups is not enabled: %w",
		group, g.State, g.ProtocolType, kerr.GroupIDNotFound)
}

// claimSource is how an upstream group may become the proxy's without a
// takeover ("" if it may not): unknown (Dead), Empty, or held only by
// streamshift anchors.
func claimSource(g kmsg.DescribeGroupsResponseGroup) string {
	switch {
	case g.State == "Dead" || g.State == "":
		return streams.OwnershipNew
	case g.State == "Empty":
		return streams.OwnershipOfflineMigration
	case g.Protocol == AnchorProtocol:
		return streams.OwnershipAnchored
	}
	return ""
}

// addClaim keeps a claim until the join creating the group records it.
func (c *Coordinator) addClaim(group string, v *streams.OwnershipValue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.claims == nil {
		c.claims = map[string]*streams.OwnershipValue{}
	}
	c.claims[group] = v
}

func (c *Coordinator) claimed(group string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.claims[group] != nil
}

// SourceTopics lists the source and repartition topics of the group's
// topology (what its anchor member subscribes to), nil if the coordinator
// holds no topology for it. It waits for the group's queue: call it off the
// event loops.
func (c *Coordinator) SourceTopics(groupID string) []string {
	ch := make(chan []string, 1)
	c.run(groupID, func(s *groupQueue) {
		if s.group == nil || s.group.Topology == nil {
			ch <- nil
			return
		}
		out := []string{}
		for t := range streams.SourceSubtopologies(s.group) {
			out = append(out, t)
		}
		ch <- out
	}, func(*streams.CoordError) { ch <- nil })
	return <-ch
}
