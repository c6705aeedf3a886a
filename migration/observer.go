package migration

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// ErrNotStable is the answer of ClassicGroupStateOf for a classic group that
// is rebalancing upstream: the takeover gives up for now (the streams member
// gets a retriable error) and the next streams join tries again.
var ErrNotStable = errors.New("the classic group is rebalancing upstream")

// Kafka Streams' defaults, used for a member whose JoinGroup the proxy has
// not seen (DescribeGroups does not report timeouts).
const (
	defaultStreamsSessionTimeoutMs   = 45000
	defaultStreamsRebalanceTimeoutMs = 300000
)

// ClassicObserver feeds the coordinator what a takeover needs and
// DescribeGroups does not tell, per classic group forwarded upstream: each
// member's session and rebalance timeouts (from its JoinGroup) and its
// generation (from every request the upstream accepted: JoinGroup
// responses, and SyncGroup, Heartbeat and OffsetCommit requests answered
// without error), when the upstream last renewed its session, so the
// takeover carries the session clock over instead of restarting it, and
// the connection of its latest request. The forwarding path feeds it; the
// observations are the group's migration state, on its executor
// (coordinator/migration_observed.go), posted without waiting; Forget
// drops a group after a takeover.
type ClassicObserver struct {
	c *coordinator.Coordinator
}

// NewClassicObserver returns the observer of the coordinator's groups.
func NewClassicObserver(c *coordinator.Coordinator) *ClassicObserver {
	return &ClassicObserver{c: c}
}

// WatchRejoin calls f (once, on a goroutine of its own) when a JoinGroup
// or SyncGroup of the group is held at the gate, until the returned stop is
// called; stop reports whether f was not called. A takeover watches while
// it drains: a member rejoining means the upstream group is rebalancing,
// and its forwarded JoinGroups and SyncGroups wait for the very requests
// the gate holds, so the drain could only end at its timeout, with every
// commit of the group held that long (longer than an exactly-once member's
// transaction timeout). Watch before the Hold: the watch is set in the
// group's queue order.
func (o *ClassicObserver) WatchRejoin(group string, f func()) (stop func() bool) {
	return o.c.WatchClassicRejoin(group, f)
}

func (o *ClassicObserver) observe(group string, ob coordinator.ClassicObservation) {
	ob.At = o.c.Now()
	o.c.ObserveClassic(group, ob)
}

// ObserveJoin records a JoinGroup and the upstream's answer to it.
func (o *ClassicObserver) ObserveJoin(req *kmsg.JoinGroupRequest, resp *kmsg.JoinGroupResponse) {
	if ob, ok := joinObservation(req, resp); ok {
		o.observe(req.Group, ob)
	}
}

func joinObservation(req *kmsg.JoinGroupRequest, resp *kmsg.JoinGroupResponse) (coordinator.ClassicObservation, bool) {
	if resp.ErrorCode != 0 || resp.MemberID == "" {
		return coordinator.ClassicObservation{}, false
	}
	ob := coordinator.ClassicObservation{Member: resp.MemberID, SessionMs: req.SessionTimeoutMillis, RebalanceMs: req.RebalanceTimeoutMillis,
		Generation: resp.Generation, HaveGeneration: true, Joined: true}
	if resp.LeaderID == resp.MemberID && len(resp.Members) > 0 {
		// The leader's answer lists the generation's members: a
		// handed-back group settles once each has its assignment. Only
		// a rebalance's leader answer pays for the list.
		ob.GenerationMembers = make([]string, len(resp.Members))
		for i, m := range resp.Members {
			ob.GenerationMembers[i] = m.MemberID
		}
	}
	if req.Version == 0 {
		ob.RebalanceMs = req.SessionTimeoutMillis
	}
	return ob, true
}

// ObserveGeneration records a generation the upstream accepted from a member
// (a SyncGroup, Heartbeat or OffsetCommit answered without error).
// The upstream renewed the member's session then.
func (o *ClassicObserver) ObserveGeneration(group, memberID string, generation int32) {
	o.observe(group, coordinator.ClassicObservation{Member: memberID, Generation: generation, HaveGeneration: true})
}

// ObserveAlive records that the member showed its session is alive without
// a generation to record: a Heartbeat the upstream answered
// REBALANCE_IN_PROGRESS (which renews the session too), or a request of the
// member held by a takeover's gate, which the upstream would have taken as
// a heartbeat had it reached it. A member not observed before is not
// recorded.
func (o *ClassicObserver) ObserveAlive(group, memberID string) {
	o.observe(group, coordinator.ClassicObservation{Member: memberID, AliveIfKnown: true})
}

// Observe records what the upstream accepted of a forwarded classic
// request: the session and rebalance timeouts and generation of a
// JoinGroup, the generation of a SyncGroup, Heartbeat or OffsetCommit
// answered without error.
func (o *ClassicObserver) Observe(req kmsg.Request, resp kmsg.Response) {
	if group, ob, ok := answerObservation(req, resp); ok {
		o.observe(group, ob)
	}
}

// ObserveAnswer is Observe and ObserveConn in one observation: what the
// forwarding path records of each answer.
func (o *ClassicObserver) ObserveAnswer(req kmsg.Request, resp kmsg.Response, conn streams.ClientInfo) {
	group, ob, ok := answerObservation(req, resp)
	cgroup, member, cok := connMember(req, resp)
	switch {
	case cok && conn.Closed != nil && (!ok || ob.Member == member):
		group, ok = cgroup, true
		ob.Member = member
		ob.Conn, ob.Closed, ob.ClosedAt = conn.ConnID, conn.Closed, conn.ClosedAt
	case cok && conn.Closed != nil:
		o.ObserveConn(req, resp, conn)
	}
	if ok {
		o.observe(group, ob)
	}
}

func answerObservation(req kmsg.Request, resp kmsg.Response) (string, coordinator.ClassicObservation, bool) {
	none := coordinator.ClassicObservation{}
	gen := func(group, member string, generation int32) (string, coordinator.ClassicObservation, bool) {
		return group, coordinator.ClassicObservation{Member: member, Generation: generation, HaveGeneration: true}, true
	}
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		if jr, ok := resp.(*kmsg.JoinGroupResponse); ok {
			ob, ok := joinObservation(r, jr)
			return r.Group, ob, ok
		}
	case *kmsg.SyncGroupRequest:
		if sr, ok := resp.(*kmsg.SyncGroupResponse); ok && sr.ErrorCode == 0 {
			group, ob, ok := gen(r.Group, r.MemberID, r.Generation)
			ob.Synced = true
			return group, ob, ok
		}
	case *kmsg.HeartbeatRequest:
		hr, ok := resp.(*kmsg.HeartbeatResponse)
		switch {
		case !ok:
		case hr.ErrorCode == 0:
			return gen(r.Group, r.MemberID, r.Generation)
		case hr.ErrorCode == kerr.RebalanceInProgress.Code:
			return r.Group, coordinator.ClassicObservation{Member: r.MemberID, AliveIfKnown: true}, true
		}
	case *kmsg.OffsetCommitRequest:
		cr, ok := resp.(*kmsg.OffsetCommitResponse)
		if !ok || r.Generation < 0 || r.MemberID == "" {
			return "", none, false
		}
		for _, t := range cr.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					return "", none, false
				}
			}
		}
		return gen(r.Group, r.MemberID, r.Generation)
	}
	return "", none, false
}

// ObserveConn records the connection a member's JoinGroup, SyncGroup or
// Heartbeat came on (resp: the upstream's answer, nil for a request held at
// the gate; a first JoinGroup names its member only in the answer). The
// takeover carries it over (docs/fast-roll.md §2 rule 4): a member whose
// latest request's connection is closed, and whose process joins as a
// streams member, is replaced at once instead of kept until its session
// runs out. Commits do not count, as in the served group (member_conn.go).
func (o *ClassicObserver) ObserveConn(req kmsg.Request, resp kmsg.Response, conn streams.ClientInfo) {
	group, member, ok := connMember(req, resp)
	if !ok || conn.Closed == nil {
		return
	}
	o.observe(group, coordinator.ClassicObservation{Member: member, Conn: conn.ConnID, Closed: conn.Closed, ClosedAt: conn.ClosedAt})
}

func connMember(req kmsg.Request, resp kmsg.Response) (group, member string, ok bool) {
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		group, member = r.Group, r.MemberID
		if jr, ok := resp.(*kmsg.JoinGroupResponse); ok && jr.ErrorCode == 0 && jr.MemberID != "" {
			member = jr.MemberID
		}
	case *kmsg.SyncGroupRequest:
		group, member = r.Group, r.MemberID
	case *kmsg.HeartbeatRequest:
		group, member = r.Group, r.MemberID
	default:
		return "", "", false
	}
	return group, member, group != "" && member != ""
}

// ObserveHeld: a member's request held by a takeover's gate shows that its
// session is alive, as the upstream would have seen had it been forwarded;
// a held JoinGroup or SyncGroup fires the takeover's WatchRejoin.
func (o *ClassicObserver) ObserveHeld(group string, req kmsg.Request) {
	o.ObserveHeldOn(group, req, streams.ClientInfo{})
}

// ObserveHeldOn is ObserveHeld and ObserveConn (closed not nil) in one
// observation.
func (o *ClassicObserver) ObserveHeldOn(group string, req kmsg.Request, conn streams.ClientInfo) {
	ob := coordinator.ClassicObservation{AliveIfKnown: true}
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		ob.Member, ob.Rejoin = r.MemberID, true
	case *kmsg.SyncGroupRequest:
		ob.Member, ob.Rejoin = r.MemberID, true
	case *kmsg.HeartbeatRequest:
		ob.Member = r.MemberID
	case *kmsg.OffsetCommitRequest:
		ob.Member = r.MemberID
	}
	if _, member, ok := connMember(req, nil); ok && member == ob.Member {
		ob.Conn, ob.Closed, ob.ClosedAt = conn.ConnID, conn.Closed, conn.ClosedAt
	}
	o.observe(group, ob)
}

// Forget drops what is known of a group.
func (o *ClassicObserver) Forget(group string) {
	o.c.ForgetClassicObserved(group)
}

// ClassicGroupStateOf builds what coordinator.TakeOverClassicGroup needs from
// the upstream's DescribeGroups answer and what the observer saw. Only a
// Stable (or Empty) Kafka Streams group ("consumer"/"stream") can be taken
// over; a rebalancing one gives ErrNotStable. The generation is the one every
// member was last seen at; members seen at different generations, or none
// seen at all, give ErrNotStable too: a wrong generation would fail the
// members' commits after the takeover.
func ClassicGroupStateOf(d *kmsg.DescribeGroupsResponseGroup, o *ClassicObserver) (streams.ClassicGroupState, error) {
	st := streams.ClassicGroupState{GroupID: d.Group}
	if d.ErrorCode != 0 {
		return st, fmt.Errorf("describe %s: error %d", d.Group, d.ErrorCode)
	}
	switch d.State {
	case "Empty", "Dead":
		return st, nil
	case "Stable":
	default:
		return st, fmt.Errorf("group %s is %s: %w", d.Group, d.State, ErrNotStable)
	}
	if d.ProtocolType != streams.ClassicProtocolType || d.Protocol != streams.ClassicProtocolName {
		return st, fmt.Errorf("group %s runs %s/%s, not a Kafka Streams group", d.Group, d.ProtocolType, d.Protocol)
	}
	observed := o.c.ObservedClassicMembers(d.Group)
	gen, haveGen := int32(0), false
	for _, dm := range d.Members {
		cm := streams.ClassicMemberState{
			MemberID: dm.MemberID,
			Client:   streams.ClientInfo{ClientID: dm.ClientID, ClientHost: dm.ClientHost},
		}
		if dm.InstanceID != nil {
			cm.InstanceID = *dm.InstanceID
		}
		var err error
		if cm.Subscription, err = classicstreams.DecodeConsumerSubscription(dm.ProtocolMetadata); err != nil {
			return st, fmt.Errorf("member %s metadata: %w", dm.MemberID, err)
		}
		if cm.Info, err = classicstreams.DecodeSubscriptionInfo(cm.Subscription.UserData); err != nil {
			return st, fmt.Errorf("member %s SubscriptionInfo: %w", dm.MemberID, err)
		}
		if cm.Assignment, err = classicstreams.DecodeConsumerAssignment(dm.MemberAssignment); err != nil {
			return st, fmt.Errorf("member %s assignment: %w", dm.MemberID, err)
		}
		if cm.AssignmentInfo, err = classicstreams.DecodeAssignmentInfo(cm.Assignment.UserData); err != nil {
			return st, fmt.Errorf("member %s AssignmentInfo: %w", dm.MemberID, err)
		}
		cm.SessionTimeoutMs, cm.RebalanceTimeoutMs = defaultStreamsSessionTimeoutMs, defaultStreamsRebalanceTimeoutMs
		if om, ok := observed[dm.MemberID]; ok {
			if om.SessionMs > 0 {
				cm.SessionTimeoutMs, cm.RebalanceTimeoutMs = om.SessionMs, om.RebalanceMs
			}
			cm.LastHeartbeat = om.LastHeartbeat
			cm.Client.ConnID, cm.Client.Closed, cm.Client.ClosedAt = om.Conn, om.Closed, om.ClosedAt
			if om.HaveGeneration {
				if haveGen && om.Generation != gen {
					return st, fmt.Errorf("members of %s seen at generations %d and %d: %w", d.Group, gen, om.Generation, ErrNotStable)
				}
				gen, haveGen = om.Generation, true
			}
		}
		st.Members = append(st.Members, cm)
	}
	if len(st.Members) > 0 && !haveGen {
		return st, fmt.Errorf("generation of %s not seen yet: %w", d.Group, ErrNotStable)
	}
	st.Generation = gen
	return st, nil
}
