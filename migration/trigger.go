package migration

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// WaitHandBack blocks a streams join of the group while the group is in a
// hand-back's last steps (from the anchor's leave until the forwarded
// JoinGroups were answered, and a short grace): the group is then neither
// here nor formed upstream, and a join served or taking it over meanwhile
// would meet classic members still holding their tasks. It returns at once
// otherwise, or when cancel is closed. The hand-back's last steps are the
// group's migration state on its coordinator executor: a group without one
// (not migrating) costs no work on its queue.
func (m *Migration) WaitHandBack(group string, cancel <-chan struct{}) {
	m.c.WaitHandBack(group, cancel)
}

// MaybeTakeOver starts the takeover of a live classic Kafka Streams group
// upstream when a streams-protocol member joins it and the policy allows
// the upgrade: Takeover answers that join itself (respond, with the
// internal topics it found missing for the caller to create), and
// MaybeTakeOver reports the request handled. Joins of the same group
// meanwhile wait for it, then take the normal path, which then finds the
// group served here. Everything else is not handled here: the caller serves
// it as without the migration (route's streamsGroupHeartbeat). cancel is
// closed when the client's connection closes.
func (m *Migration) MaybeTakeOver(hb *kmsg.StreamsGroupHeartbeatRequest, client streams.ClientInfo, cancel <-chan struct{}, respond func(coordinator.HeartbeatResult)) (handled bool) {
	if hb.MemberEpoch == 0 {
		// A join during a hand-back's last steps would find the group
		// neither here nor formed upstream yet.
		m.c.WaitHandBack(hb.Group, cancel)
	}
	if hb.Group == "" || hb.MemberEpoch != 0 || m.o.Ownership.Owns(hb.Group) {
		return false
	}
	// After a failed attempt the join waits out the group's backoff
	// (coordinator/takeover_pacing.go): a JOINING 4.4 member resends at
	// once.
	if !m.c.TakeoverWait(hb.Group, cancel) {
		return true // the client is gone: nobody to answer
	}
	if m.o.Ownership.Owns(hb.Group) {
		return false // taken over while it waited
	}
	// One takeover of the group at a time, on its coordinator executor
	// (coordinator/migration_takeover.go): the others wait for its end.
	finish, gone := m.c.BeginTakeover(hb.Group, cancel)
	if gone {
		return true // the client is gone: nobody to answer
	}
	if finish == nil {
		return false
	}

	g, err := m.up.describe(hb.Group)
	if err != nil || !liveClassic(g) || !m.o.Policy.PolicyFor(hb.Group).AllowsUpgrade() {
		// Not a takeover (or the upstream cannot tell): the route's
		// claim asks again and answers as without migration.
		finish()
		return false
	}
	if g.State != "Stable" {
		// Only a stable group can be taken over (ClassicGroupStateOf):
		// answered at once, without holding the group's requests, which
		// its rebalance needs to go upstream. The member retries.
		finish()
		m.c.TakeoverNotReady(hb.Group)
		m.log.Debug().Str("group", hb.Group).Str("upstream_state", g.State).Msg("takeover waits for the classic group to be stable upstream")
		respond(coordinator.HeartbeatResult{Response: takeoverRefused(hb, kerr.CoordinatorLoadInProgress, fmt.Errorf("group %s is %s: %w", hb.Group, g.State, ErrNotStable))})
		return true
	}
	if m.o.RefreshMetadata != nil {
		ctx, cancel := context.WithTimeout(context.Background(), m.o.RequestTimeout)
		if err := m.o.RefreshMetadata(ctx); err != nil {
			m.log.Debug().Str("group", hb.Group).Err(err).Msg("takeover: metadata refresh failed; the last image is used")
		}
		cancel()
	}
	m.log.Info().Str("group", hb.Group).Str("upstream_state", g.State).Str("protocol", g.Protocol).
		Int("classic_members", len(g.Members)).Msg("takeover of a live classic group starts")
	tell(m.o.Events, EventTakeoverStarted, hb.Group, nil, map[string]any{"upstreamState": g.State, "protocol": g.Protocol, "classicMembers": len(g.Members), "memberId": hb.MemberID})
	m.takeover.Run(hb, client, func(res coordinator.HeartbeatResult) {
		resp := res.Response
		if resp.ErrorCode != 0 {
			m.c.TakeoverFailed(hb.Group, func(backoff time.Duration) {
				m.log.Warn().Str("group", hb.Group).Int16("error_code", resp.ErrorCode).Str("error", deref(resp.ErrorMessage)).Dur("next_attempt_in", backoff).Msg("takeover did not complete")
			})
			tell(m.o.Events, EventTakeoverFailed, hb.Group, fmt.Errorf("error code %d: %s", resp.ErrorCode, deref(resp.ErrorMessage)), map[string]any{"errorCode": resp.ErrorCode})
		} else {
			m.c.TakeoverSucceeded(hb.Group)
			m.log.Info().Str("group", hb.Group).Int32("group_epoch", resp.MemberEpoch).Msg("takeover done: the group is served by streamshift")
			tell(m.o.Events, EventTakeoverDone, hb.Group, nil, map[string]any{"groupEpoch": resp.MemberEpoch})
		}
		finish()
		respond(res)
	})
	return true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// liveClassic reports whether the upstream group has classic members other
// than streamshift anchors (what Ownership hands to a Takeover).
func liveClassic(g *kmsg.DescribeGroupsResponseGroup) bool {
	switch {
	case g.State == "" || g.State == "Dead" || g.State == "Empty":
		return false
	case g.Protocol == coordinator.AnchorProtocol:
		return false
	}
	return true
}

// takeoverHook is the Ownership's takeover hook. The takeover itself runs
// from MaybeTakeOver, which holds the joining request; a join that
// reaches the claim of a live classic group raced it (the group became
// live after MaybeTakeOver looked), so it is told to retry, unless the
// policy forbids the upgrade, which Kafka answers GROUP_ID_NOT_FOUND.
type takeoverHook struct{ m *Migration }

func (h takeoverHook) Takeover(_ context.Context, g kmsg.DescribeGroupsResponseGroup) error {
	if p := h.m.o.Policy.PolicyFor(g.Group); !p.AllowsUpgrade() {
		return fmt.Errorf("Group %s is a live classic group (state %s) upstream and migration.policy %v does not allow its upgrade: %w",
			g.Group, g.State, p, kerr.GroupIDNotFound)
	}
	return fmt.Errorf("group %s became a live classic group upstream (state %s); the takeover starts on the next join: %w",
		g.Group, g.State, kerr.CoordinatorLoadInProgress)
}
