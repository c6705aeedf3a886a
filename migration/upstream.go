package migration

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// UpstreamGroups are the upstream's classic group calls the migration makes
// through the control-plane client (upstream.Groups).
type UpstreamGroups interface {
	// DescribeUpstreamGroup describes one group; its error code is the
	// caller's to read.
	DescribeUpstreamGroup(ctx context.Context, group string) (kmsg.DescribeGroupsResponseGroup, error)
	// FenceMembers removes the members from the upstream group with one
	// LeaveGroup (v3+).
	FenceMembers(ctx context.Context, group string, members []kmsg.LeaveGroupRequestMember) error
}

// Anchors are the anchor members of the groups served here (package route
// gives upstream/anchor's Manager, subscribed to the coordinator's
// topology).
type Anchors interface {
	// Join starts the group's anchor on the topology the coordinator
	// holds, and returns once it is in the upstream group.
	Join(ctx context.Context, group string) error
	// Leave makes the group's anchor leave the upstream group.
	Leave(ctx context.Context, group string) error
}

// migrationUpstream is the upstream side of the online migration over the
// control-plane client and the anchors: TakeoverUpstream (describe, fence,
// anchor join) and HandBackUpstream (anchor leave, and the end of a
// hand-back). Every method starts its I/O on a goroutine of its own: they
// are called on coordinator goroutines. A hand-back's held JoinGroups do
// not come through here: they go upstream on their members' own
// connections (translate.Forward).
type migrationUpstream struct {
	groups  UpstreamGroups
	anchors Anchors
	timeout time.Duration
	// handOff keeps a group's hand-back from the anchor's leave until it
	// is done and a grace passed: streams joins wait meanwhile (doc.go,
	// "Hand-back"). It is the group's migration state on its coordinator
	// executor, the grace on the coordinator's clock.
	handOff handOff
	log     zerolog.Logger
}

// handOff is the coordinator's part of a hand-back's last steps
// (coordinator/migration_handback.go).
type handOff interface {
	AnchorLeftForHandBack(group string, then func())
	HandBackDone(group string, grace time.Duration)
}

// handBackGrace is how long a streams join still waits after the hand-back
// is done (the forwarded JoinGroups were answered MEMBER_ID_REQUIRED), so
// the classic members' rejoins with their new ids reach the upstream group
// first.
const handBackGrace = 2 * time.Second

// DescribeGroup implements TakeoverUpstream.
func (u *migrationUpstream) DescribeGroup(group string, done func(*kmsg.DescribeGroupsResponseGroup, error)) {
	go func() { done(u.describe(group)) }()
}

// describe is the upstream group, or the error its code carries.
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

// FenceMembers implements TakeoverUpstream.
func (u *migrationUpstream) FenceMembers(group string, members []kmsg.LeaveGroupRequestMember, done func(error)) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), u.timeout)
		defer cancel()
		done(u.groups.FenceMembers(ctx, group, members))
	}()
}

// JoinAnchor implements TakeoverUpstream: the anchor subscribes to the
// topology the coordinator now holds.
func (u *migrationUpstream) JoinAnchor(group string, done func(error)) {
	go func() { done(u.anchors.Join(context.Background(), group)) }()
}

// LeaveAnchor implements HandBackUpstream: once the anchor is gone, streams
// joins of the group wait until HandBackDone.
func (u *migrationUpstream) LeaveAnchor(group string, done func(error)) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), u.timeout)
		defer cancel()
		err := u.anchors.Leave(ctx, group)
		if err != nil {
			u.log.Warn().Str("group", group).Err(err).Msg("hand-back: the anchor could not leave the upstream group; the group stays a streams group")
			done(err)
			return
		}
		u.log.Info().Str("group", group).Msg("hand-back starts: every classic member is rejoining, the anchor left the upstream group, their JoinGroups go upstream on their own connections")
		u.handOff.AnchorLeftForHandBack(group, func() { done(nil) })
	}()
}

// HandBackDone implements HandBackUpstream: streams joins of the group may
// go on after handBackGrace, on the coordinator's clock.
func (u *migrationUpstream) HandBackDone(group string) {
	u.handOff.HandBackDone(group, handBackGrace)
}
