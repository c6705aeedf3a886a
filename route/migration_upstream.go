package route

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/upstream"
)

// migrationUpstream is the upstream side of the online migration over the
// control-plane client and the anchor manager: translate.TakeoverUpstream
// (describe, fence, anchor join) and translate.Upstream (anchor leave, and
// the end of a hand-back). Every method starts its I/O on a goroutine of
// its own: they are called on coordinator goroutines. A hand-back's held
// JoinGroups do not come through here: they go upstream on their members'
// own connections (Migration.forward).
type migrationUpstream struct {
	a       *Routes
	groups  *upstream.Groups
	timeout time.Duration

	mu sync.Mutex
	// handingBack: groups whose anchor left for a hand-back, until the
	// translator reports it done (HandBackDone) and a grace passed.
	handingBack map[string]*handingBack
}

// handingBack is a hand-back between the anchor's leave and the answers to
// the forwarded JoinGroups: the group is neither here nor formed upstream,
// so a streams join must wait (translate's doc.go, "Hand-back").
type handingBack struct {
	done chan struct{}
}

// handBackGrace is how long a streams join still waits after the hand-back
// is done (the forwarded JoinGroups were answered MEMBER_ID_REQUIRED), so
// the classic members' rejoins with their new ids reach the upstream group
// first.
const handBackGrace = 2 * time.Second

// waitHandBack blocks while the group is being handed back, at most until
// cancel is closed.
func (u *migrationUpstream) waitHandBack(group string, cancel <-chan struct{}) {
	u.mu.Lock()
	hb := u.handingBack[group]
	u.mu.Unlock()
	if hb == nil {
		return
	}
	select {
	case <-hb.done:
	case <-cancel:
	}
}

func (u *migrationUpstream) endHandBack(group string, hb *handingBack) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.handingBack[group] == hb {
		delete(u.handingBack, group)
		close(hb.done)
	}
}

// DescribeGroup implements translate.TakeoverUpstream.
func (u *migrationUpstream) DescribeGroup(group string, done func(*kmsg.DescribeGroupsResponseGroup, error)) {
	go func() { done(u.describe(group)) }()
}

func (u *migrationUpstream) describe(group string) (*kmsg.DescribeGroupsResponseGroup, error) {
	ctx, cancel := context.WithTimeout(context.Background(), u.timeout)
	defer cancel()
	g, err := u.groups.DescribeUpstreamGroup(ctx, group)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
		return nil, fmt.Errorf("describe upstream group %s: %w", group, err)
	}
	return &g, nil
}

// FenceMembers implements translate.TakeoverUpstream (upstream.Groups).
func (u *migrationUpstream) FenceMembers(group string, members []kmsg.LeaveGroupRequestMember, done func(error)) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), u.timeout)
		defer cancel()
		done(u.groups.FenceMembers(ctx, group, members))
	}()
}

// JoinAnchor implements translate.TakeoverUpstream: the anchor subscribes
// to the topology the coordinator now holds.
func (u *migrationUpstream) JoinAnchor(group string, done func(error)) {
	go func() {
		u.a.ensureAnchor(group, nil)
		ctx, cancel := context.WithTimeout(context.Background(), u.a.o.AnchorWait)
		defer cancel()
		_, err := u.a.o.Anchors.Generation(ctx, group)
		done(err)
	}()
}

// LeaveAnchor implements translate.Upstream: once the anchor is gone,
// streams joins of the group wait until HandBackDone.
func (u *migrationUpstream) LeaveAnchor(group string, done func(error)) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), u.timeout)
		defer cancel()
		err := u.a.o.Anchors.Leave(ctx, group)
		if err != nil {
			u.a.o.Log.Warn().Str("group", group).Err(err).Msg("hand-back: the anchor could not leave the upstream group; the group stays a streams group")
		} else {
			u.a.o.Log.Info().Str("group", group).Msg("hand-back starts: every classic member is rejoining, the anchor left the upstream group, their JoinGroups go upstream on their own connections")
			hb := &handingBack{done: make(chan struct{})}
			u.mu.Lock()
			if u.handingBack == nil {
				u.handingBack = map[string]*handingBack{}
			}
			if old := u.handingBack[group]; old != nil {
				close(old.done)
			}
			u.handingBack[group] = hb
			u.mu.Unlock()
		}
		done(err)
	}()
}

// HandBackDone implements translate.Upstream: streams joins of the group
// may go on after handBackGrace, on the coordinator's clock.
func (u *migrationUpstream) HandBackDone(group string) {
	u.mu.Lock()
	hb := u.handingBack[group]
	u.mu.Unlock()
	if hb != nil {
		u.a.o.Log.Info().Str("group", group).Msg("hand-back done: the classic group is the broker's again")
		u.a.o.Coordinator.AfterFunc(handBackGrace, func() { u.endHandBack(group, hb) })
	}
}
