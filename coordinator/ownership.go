package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Requester sends a request to the right upstream broker; *kgo.Client
// implements it (group requests go to the group's coordinator).
type Requester interface {
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
}

// Takeover moves a live classic group of the upstream into the proxy (online
// migration). It returns nil once the group is the proxy's, or the error the
// joining streams member gets. Ownership without a Takeover refuses such
// groups with GROUP_ID_NOT_FOUND, as Kafka does.
type Takeover interface {
	Takeover(ctx context.Context, upstream kmsg.DescribeGroupsResponseGroup) error
}

// AnchorProtocol is the protocol name of the proxy's anchor member in the
// upstream classic group of an owned group (see package anchor).
const AnchorProtocol = "streamshift"

// Ownership decides which groups the proxy serves. A group is the proxy's
// once the coordinator holds it (its records), or once a streams-protocol
// join claimed it after asking the upstream: a group the upstream does not
// know, an Empty classic group (offline migration: its offsets stay), or
// one whose only members are streamshift anchors (a restarted proxy) becomes
// the proxy's; a live classic group goes to Takeover.
type Ownership struct {
	c        *Coordinator
	client   Requester
	takeover Takeover

	mu       sync.Mutex
	claimed  map[string]bool
	inflight map[string]*claim
}

type claim struct {
	done chan struct{}
	err  error
}

// NewOwnership returns the ownership table of c, asking the upstream
// through client; takeover may be nil.
func NewOwnership(c *Coordinator, client Requester, takeover Takeover) *Ownership {
	return &Ownership{c: c, client: client, takeover: takeover, claimed: map[string]bool{}, inflight: map[string]*claim{}}
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
	o.mu.Lock()
	ok := o.claimed[group]
	o.mu.Unlock()
	return ok || o.c.Owns(group)
}

// Release forgets a claim once the coordinator holds the group (or the
// join that claimed it failed): from then on its records decide.
func (o *Ownership) Release(group string) {
	o.mu.Lock()
	delete(o.claimed, group)
	o.mu.Unlock()
}

// Claim makes the group the proxy's if the upstream allows it, asking the
// upstream once however many members join at the same time. It blocks on
// the upstream: call it off the event loops and off the group's queue. The
// error carries the Kafka error the joining member gets.
func (o *Ownership) Claim(ctx context.Context, group string) error {
	o.mu.Lock()
	if o.claimed[group] {
		o.mu.Unlock()
		return nil
	}
	cl := o.inflight[group]
	if cl == nil {
		cl = &claim{done: make(chan struct{})}
		o.inflight[group] = cl
		o.mu.Unlock()
		cl.err = o.decide(ctx, group)
		o.mu.Lock()
		if cl.err == nil {
			o.claimed[group] = true
		}
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

func (o *Ownership) decide(ctx context.Context, group string) error {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{group}
	resp, err := o.client.Request(ctx, req)
	if err != nil {
		return fmt.Errorf("describe upstream group %s: %v: %w", group, err, kerr.CoordinatorNotAvailable)
	}
	groups := resp.(*kmsg.DescribeGroupsResponse).Groups
	if len(groups) != 1 {
		return fmt.Errorf("describe upstream group %s: %d groups in the answer: %w", group, len(groups), kerr.CoordinatorNotAvailable)
	}
	g := groups[0]
	switch err := kerr.ErrorForCode(g.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.GroupIDNotFound):
		return nil // a 4.x upstream's answer for a group it does not know as classic
	case errors.Is(err, kerr.GroupAuthorizationFailed):
		return fmt.Errorf("the proxy may not describe upstream group %s: %w", group, err)
	default:
		// NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, ...: retriable for
		// the member; the control-plane client finds the coordinator again.
		return fmt.Errorf("describe upstream group %s: %v: %w", group, err, kerr.CoordinatorNotAvailable)
	}
	if UpstreamGroupClaimable(g) {
		return nil
	}
	o.mu.Lock()
	t := o.takeover
	o.mu.Unlock()
	if t != nil {
		return t.Takeover(ctx, g)
	}
	return fmt.Errorf("Group %s is a live classic group (state %s, protocol type %q) upstream; online migration of classic groups is not enabled: %w",
		group, g.State, g.ProtocolType, kerr.GroupIDNotFound)
}

// UpstreamGroupClaimable reports whether an upstream group may become the
// proxy's without a takeover: unknown (Dead), Empty, or held only by
// streamshift anchors.
func UpstreamGroupClaimable(g kmsg.DescribeGroupsResponseGroup) bool {
	switch g.State {
	case "Dead", "Empty", "":
		return true
	}
	if g.Protocol == AnchorProtocol {
		return true
	}
	return false
}
