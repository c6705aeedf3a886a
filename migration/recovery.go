package migration

import (
	"slices"
	"sync"
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
type Recovery struct {
	m *Migration
	// window is how long classic joins wait for a streams member.
	window time.Duration

	mu     sync.Mutex
	groups map[string]*recovering
}

// recovering is one group under recovery.
type recovering struct {
	// held are the group's held JoinGroups.
	held  []RecoveryJoin
	timer coordinator.Timer
	// stale are the member ids its JoinGroups carried while it recovered:
	// given out by the lost state (or by the upstream before a takeover),
	// they mean nothing to the broker after a hand-back, which would answer
	// UNKNOWN_MEMBER_ID and make Kafka Streams drop its tasks.
	stale map[string]bool
	// leaving: the anchor is leaving for a hand-back; handedBack: it left
	// and joins go upstream.
	leaving, handedBack bool
	warned              bool
}

// RecoveryJoin is a JoinGroup held by a recovery: rerun runs it again
// from the start, unless its connection closed (done).
type RecoveryJoin struct {
	Done  <-chan struct{}
	Rerun func()
}

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
	return &Recovery{m: m, window: window, groups: map[string]*recovering{}}
}

// Recovering reports whether the group is under recovery (and not handed
// back yet).
func (r *Recovery) Recovering(group string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.groups[group]
	return g != nil && !g.handedBack
}

// Join decides about a JoinGroup about to be forwarded upstream. With
// JoinHeld, h is kept to run the request again once the recovery ends; with
// JoinHandedBack, the request to forward (its member id dropped if stale).
func (r *Recovery) Join(req *kmsg.JoinGroupRequest, h RecoveryJoin) (JoinVerdict, *kmsg.JoinGroupRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.groups[req.Group]
	switch {
	case g == nil:
		return JoinForward, nil
	case g.handedBack:
		if req.MemberID == "" || !g.stale[req.MemberID] {
			return JoinHandedBack, req
		}
		delete(g.stale, req.MemberID)
		anon := *req
		anon.MemberID = ""
		return JoinHandedBack, &anon
	}
	if req.MemberID != "" {
		g.stale[req.MemberID] = true
	}
	// Joins of closed connections go first: a client that reconnects and
	// joins again and again holds one join, not one per connection.
	g.held = slices.DeleteFunc(g.held, RecoveryJoin.gone)
	g.held = append(g.held, h)
	return JoinHeld, nil
}

// Refused looks at the upstream's answer to a forwarded JoinGroup. An
// INCONSISTENT_GROUP_PROTOCOL from a group held only by streamshift anchors
// starts the group's recovery and becomes COORDINATOR_LOAD_IN_PROGRESS; any
// other answer is kept. It blocks on the upstream: it runs on the proxy's
// goroutine of this response, which only this client connection waits for.
func (r *Recovery) Refused(req *kmsg.JoinGroupRequest, resp *kmsg.JoinGroupResponse) kmsg.Response {
	if resp.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		return resp
	}
	g, err := r.m.up.describe(req.Group)
	if err != nil || !anchored(g) {
		return resp
	}
	r.mu.Lock()
	rg := r.groups[req.Group]
	if rg == nil || rg.handedBack {
		rg = &recovering{stale: map[string]bool{}}
		r.groups[req.Group] = rg
		rg.timer = r.m.c.AfterFunc(r.window, func() { r.expired(req.Group, rg) })
		r.m.log.Info().Str("group", req.Group).Str("member", req.MemberID).Dur("window", r.window).
			Msg("restart recovery: the group is held upstream by streamshift's anchor but has no state here (a restart without the durable log); its classic members' joins wait for a streams member to bring its topology back")
	}
	if req.MemberID != "" {
		rg.stale[req.MemberID] = true
	}
	r.mu.Unlock()
	return LoadingJoin(req)
}

// expired: no streams member came back within the window.
func (r *Recovery) expired(group string, g *recovering) {
	log := r.m.log
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groups[group] != g || g.handedBack || g.leaving {
		return
	}
	if !r.m.o.Policy.PolicyFor(group).AllowsDowngrade() {
		if !g.warned {
			g.warned = true
			log.Warn().Str("group", group).Dur("waited", r.window).
				Msg("restart recovery: no streams member came back and migration.policy does not allow a downgrade; the group's classic members wait until a streams member rejoins")
		}
		return
	}
	g.leaving = true
	log.Info().Str("group", group).Dur("waited", r.window).
		Msg("restart recovery: no streams member came back; handing the group back to the broker")
	r.m.up.LeaveAnchor(group, func(err error) {
		r.mu.Lock()
		g.leaving = false
		if err != nil {
			// Try again after another window.
			g.timer = r.m.c.AfterFunc(r.window, func() { r.expired(group, g) })
			r.mu.Unlock()
			return
		}
		g.handedBack = true
		held := g.held
		g.held = nil
		// The stale member ids of members still to rejoin are kept a
		// window long: they rejoin within a second of the hand-back.
		r.m.c.AfterFunc(r.window, func() { r.forget(group, g) })
		r.mu.Unlock()
		r.m.up.HandBackDone(group)
		runAll(held)
	})
}

// StreamsJoined: a streams member joined the group, so the coordinator
// serves it again and its held classic joins go to the translator.
func (r *Recovery) StreamsJoined(group string) {
	r.mu.Lock()
	g := r.groups[group]
	if g == nil || g.handedBack {
		r.mu.Unlock()
		return
	}
	delete(r.groups, group)
	g.timer.Stop()
	held := g.held
	r.mu.Unlock()
	r.m.log.Info().Str("group", group).Int("held_joins", len(held)).
		Msg("restart recovery done: a streams member brought the topology back; the classic members join the streams group")
	runAll(held)
}

func (r *Recovery) forget(group string, g *recovering) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groups[group] == g {
		delete(r.groups, group)
	}
}

func (h RecoveryJoin) gone() bool {
	select {
	case <-h.Done:
		return true
	default:
		return false
	}
}

func runAll(held []RecoveryJoin) {
	for _, h := range held {
		if !h.gone() {
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
