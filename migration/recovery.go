package migration

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
)

// A streamshift restarted without the durable log holds no state for the
// groups it served, while their upstream classic groups still hold its
// anchor member (static, long session). A streams member finds its way back
// by itself: its heartbeat gets UNKNOWN_MEMBER_ID, it rejoins at epoch 0 and
// the claim sees the anchor (OwnershipAnchored). A classic member of such a
// group does not: its requests go upstream, where the anchor's protocol
// ("streamshift") answers its rejoin INCONSISTENT_GROUP_PROTOCOL, which is
// fatal to Kafka Streams. So a classic JoinGroup the upstream refuses that
// way, in a group held only by streamshift's anchor, starts a recovery of
// the group here, as a Kafka coordinator still loading a group's partition
// would: that join gets COORDINATOR_LOAD_IN_PROGRESS (retriable), and the
// group's later classic JoinGroups are held, as a classic group holds
// JoinGroups while it rebalances (a held join does not make a 3.x consumer
// retry without backoff, as a stream of retriable errors does), until a
// streams member's rejoin brings the topology back and the translator
// serves them, or until the recovery window passes with none. Then, if the
// policy allows a downgrade, the group is handed back: the anchor leaves and
// the joins go upstream, without the member ids the lost state gave out, as
// after a hand-back.
//
// The recovery's state is the group's migration state, on its executor
// (coordinator/migration_recovery.go); Recovery decides what it does.
type Recovery struct {
	m *Migration
	// window is how long classic joins wait for a streams member.
	window time.Duration
}

// RecoveryJoin is a JoinGroup held by a recovery: rerun runs it again
// from the start, unless its connection closed (done).
type RecoveryJoin = coordinator.RecoveryJoin

// JoinVerdict is what becomes of a classic JoinGroup of a group the
// coordinator did not serve.
type JoinVerdict int

const (
	// JoinForward: forward it, watching for the anchor's refusal.
	JoinForward JoinVerdict = iota
	// JoinHeld: the recovery holds it and re-runs it later.
	JoinHeld
	// JoinHandedBack: forward it without a stale member id.
	JoinHandedBack
)

func newRecovery(m *Migration, window time.Duration) *Recovery {
	return &Recovery{m: m, window: window}
}

// Recovering reports whether the group may be under recovery: it has one,
// maybe handed back already (StreamsJoined tells which). It does not wait
// for the group's queue.
func (r *Recovery) Recovering(group string) bool {
	return r.m.c.HasRecovery(group)
}

// Join decides about a JoinGroup about to be forwarded upstream, and calls
// decide with the verdict: at once, without a queue hop, for a group with
// no recovery (JoinForward); else from the group's queue, on a goroutine of
// its own. With JoinHeld, h is kept to run the request again once the
// recovery ends; with JoinHandedBack, the request to forward (its member id
// dropped if stale).
func (r *Recovery) Join(req *kmsg.JoinGroupRequest, h RecoveryJoin, decide func(JoinVerdict, *kmsg.JoinGroupRequest)) {
	if !r.m.c.HasRecovery(req.Group) {
		decide(JoinForward, nil)
		return
	}
	r.m.c.WithRecovery(req.Group, func(g *coordinator.RestartRecovery) *coordinator.RestartRecovery {
		verdict, fwd := joinVerdict(g, req, h)
		go decide(verdict, fwd)
		return g
	}, func() { go decide(JoinForward, nil) })
}

// joinVerdict decides about a join of a group whose recovery is g (nil:
// none). On the group's queue.
func joinVerdict(g *coordinator.RestartRecovery, req *kmsg.JoinGroupRequest, h RecoveryJoin) (JoinVerdict, *kmsg.JoinGroupRequest) {
	switch {
	case g == nil:
		return JoinForward, nil
	case g.HandedBack:
		if req.MemberID == "" || !g.Stale[req.MemberID] {
			return JoinHandedBack, req
		}
		delete(g.Stale, req.MemberID)
		anon := *req
		anon.MemberID = ""
		return JoinHandedBack, &anon
	}
	if req.MemberID != "" {
		g.Stale[req.MemberID] = true
	}
	// Joins of closed connections go first: a client that reconnects and
	// joins again and again holds one join, not one per connection.
	g.Held = slices.DeleteFunc(g.Held, RecoveryJoin.Gone)
	g.Held = append(g.Held, h)
	return JoinHeld, nil
}

// Refused looks at the upstream's answer to a forwarded JoinGroup. An
// INCONSISTENT_GROUP_PROTOCOL from a group held only by streamshift anchors
// starts the group's recovery and becomes COORDINATOR_LOAD_IN_PROGRESS; any
// other answer is kept. It blocks on the upstream and on the group's queue:
// it runs on the proxy's goroutine of this response, which only this client
// connection waits for.
func (r *Recovery) Refused(req *kmsg.JoinGroupRequest, resp *kmsg.JoinGroupResponse) kmsg.Response {
	if resp.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		return resp
	}
	g, err := r.m.up.describe(req.Group)
	if err != nil || !anchored(g) {
		return resp
	}
	started := make(chan struct{})
	r.m.c.WithRecovery(req.Group, func(rg *coordinator.RestartRecovery) *coordinator.RestartRecovery {
		defer close(started)
		if rg == nil || rg.HandedBack {
			rg = &coordinator.RestartRecovery{Stale: map[string]bool{}}
			r.m.c.ArmRecovery(req.Group, rg, r.window, func(g *coordinator.RestartRecovery) *coordinator.RestartRecovery {
				return r.expired(req.Group, g)
			})
			r.m.log.Info().Str("group", req.Group).Str("member", req.MemberID).Dur("window", r.window).
				Msg("restart recovery: the group is held upstream by streamshift's anchor but has no state here (a restart without the durable log); its classic members' joins wait for a streams member to bring its topology back")
		}
		if req.MemberID != "" {
			rg.Stale[req.MemberID] = true
		}
		return rg
	}, func() { close(started) })
	<-started
	return LoadingJoin(req)
}

// expired: no streams member came back within the window. On the group's
// queue.
func (r *Recovery) expired(group string, g *coordinator.RestartRecovery) *coordinator.RestartRecovery {
	log := r.m.log
	if g.HandedBack || g.Leaving {
		return g
	}
	if !r.m.o.Policy.PolicyFor(group).AllowsDowngrade() {
		if !g.Warned {
			g.Warned = true
			log.Warn().Str("group", group).Dur("waited", r.window).
				Msg("restart recovery: no streams member came back and migration.policy does not allow a downgrade; the group's classic members wait until a streams member rejoins")
		}
		return g
	}
	g.Leaving = true
	log.Info().Str("group", group).Dur("waited", r.window).
		Msg("restart recovery: no streams member came back; handing the group back to the broker")
	r.m.up.LeaveAnchor(group, func(err error) {
		r.m.c.WithRecovery(group, func(cur *coordinator.RestartRecovery) *coordinator.RestartRecovery {
			if cur != g {
				return cur
			}
			g.Leaving = false
			if err != nil {
				// Try again after another window.
				r.m.c.ArmRecovery(group, g, r.window, func(g *coordinator.RestartRecovery) *coordinator.RestartRecovery {
					return r.expired(group, g)
				})
				return g
			}
			g.HandedBack = true
			held := g.Held
			g.Held = nil
			// The stale member ids of members still to rejoin are kept a
			// window long: they rejoin within a second of the hand-back.
			r.m.c.ArmRecovery(group, g, r.window, func(*coordinator.RestartRecovery) *coordinator.RestartRecovery { return nil })
			go func() {
				r.m.up.HandBackDone(group)
				runAll(held)
			}()
			return g
		}, nil)
	})
	return g
}

// StreamsJoined: a streams member joined the group, so the coordinator
// serves it again and its held classic joins go to the translator.
func (r *Recovery) StreamsJoined(group string) {
	r.m.c.WithRecovery(group, func(g *coordinator.RestartRecovery) *coordinator.RestartRecovery {
		if g == nil || g.HandedBack {
			return g
		}
		held := g.Held
		r.m.log.Info().Str("group", group).Int("held_joins", len(held)).
			Msg("restart recovery done: a streams member brought the topology back; the classic members join the streams group")
		go runAll(held)
		return nil
	}, nil)
}

func runAll(held []RecoveryJoin) {
	for _, h := range held {
		if !h.Gone() {
			h.Rerun()
		}
	}
}

// anchored reports whether the upstream group is held only by streamshift
// anchors (the anchor's protocol is the group's: no classic member could
// join it).
func anchored(g *kmsg.DescribeGroupsResponseGroup) bool {
	return g.State != "Empty" && g.State != "Dead" && g.State != "" && g.Protocol == coordinator.AnchorProtocol
}

// LoadingJoin is the JoinGroup answer of a group still loading.
func LoadingJoin(req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = req.Version
	resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
	resp.MemberID = req.MemberID
	resp.Generation = -1
	resp.Members = []kmsg.JoinGroupResponseMember{}
	return resp
}
