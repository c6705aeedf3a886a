package migration

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
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

// ClassicObserver remembers, per classic group forwarded upstream, what a
// takeover needs and DescribeGroups does not tell: each member's session and
// rebalance timeouts (from its JoinGroup) and its generation (from every
// request the upstream accepted: JoinGroup responses, and SyncGroup,
// Heartbeat and OffsetCommit requests answered without error), and when the
// upstream last renewed its session, so the takeover carries the session
// clock over instead of restarting it. The forwarding path feeds it; Forget
// drops a group after a takeover.
type ClassicObserver struct {
	// Now is the coordinator's clock (Coordinator.Now), required: the
	// session timers that continue from what is observed run on it.
	Now func() time.Time

	mu     sync.Mutex
	groups map[string]map[string]*observedMember
	// rejoining is, per group whose takeover is draining, what to call
	// when a member's JoinGroup or SyncGroup is held (WatchRejoin).
	rejoining map[string]func()
}

// WatchRejoin calls f (once, on a goroutine of its own) when a JoinGroup
// or SyncGroup of the group is held at the gate, until the returned stop is
// called; stop reports whether f was not called. A takeover watches while
// it drains: a member rejoining means the upstream group is rebalancing,
// and its forwarded JoinGroups and SyncGroups wait for the very requests
// the gate holds, so the drain could only end at its timeout, with every
// commit of the group held that long (longer than an exactly-once member's
// transaction timeout).
func (o *ClassicObserver) WatchRejoin(group string, f func()) (stop func() bool) {
	// Under o.mu: fired and stopped decide which of the two happens, f
	// or the takeover going on, never both.
	fired, stopped := false, false
	o.mu.Lock()
	if o.rejoining == nil {
		o.rejoining = map[string]func(){}
	}
	o.rejoining[group] = func() {
		o.mu.Lock()
		first := !fired && !stopped
		fired = true
		o.mu.Unlock()
		if first {
			go f()
		}
	}
	o.mu.Unlock()
	return func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		delete(o.rejoining, group)
		stopped = true
		return !fired
	}
}

type observedMember struct {
	sessionMs, rebalanceMs int32
	generation             int32
	haveGeneration         bool
	lastHeartbeat          time.Time
	// connID and closed: the connection of the member's latest JoinGroup,
	// SyncGroup or Heartbeat (ObserveConn); closed is nil if unknown.
	connID uint64
	closed <-chan struct{}
}

func (o *ClassicObserver) member(group, id string) *observedMember {
	if o.groups == nil {
		o.groups = map[string]map[string]*observedMember{}
	}
	g := o.groups[group]
	if g == nil {
		g = map[string]*observedMember{}
		o.groups[group] = g
	}
	m := g[id]
	if m == nil {
		m = &observedMember{}
		g[id] = m
	}
	return m
}

// ObserveJoin records a JoinGroup and the upstream's answer to it.
func (o *ClassicObserver) ObserveJoin(req *kmsg.JoinGroupRequest, resp *kmsg.JoinGroupResponse) {
	if resp.ErrorCode != 0 || resp.MemberID == "" {
		return
	}
	now := o.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	m := o.member(req.Group, resp.MemberID)
	m.lastHeartbeat = now
	m.sessionMs, m.rebalanceMs = req.SessionTimeoutMillis, req.RebalanceTimeoutMillis
	if req.Version == 0 {
		m.rebalanceMs = req.SessionTimeoutMillis
	}
	m.generation, m.haveGeneration = resp.Generation, true
}

// ObserveGeneration records a generation the upstream accepted from a member
// (a SyncGroup, Heartbeat or OffsetCommit answered without error).
// The upstream renewed the member's session then.
func (o *ClassicObserver) ObserveGeneration(group, memberID string, generation int32) {
	now := o.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	m := o.member(group, memberID)
	m.generation, m.haveGeneration = generation, true
	m.lastHeartbeat = now
}

// ObserveAlive records that the member showed its session is alive without
// a generation to record: a Heartbeat the upstream answered
// REBALANCE_IN_PROGRESS (which renews the session too), or a request of the
// member held by a takeover's gate, which the upstream would have taken as
// a heartbeat had it reached it.
func (o *ClassicObserver) ObserveAlive(group, memberID string) {
	if group == "" || memberID == "" {
		return
	}
	now := o.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if g := o.groups[group]; g != nil {
		if m := g[memberID]; m != nil {
			m.lastHeartbeat = now
		}
	}
}

// Observe records what the upstream accepted of a forwarded classic
// request: the session and rebalance timeouts and generation of a
// JoinGroup, the generation of a SyncGroup, Heartbeat or OffsetCommit
// answered without error.
func (o *ClassicObserver) Observe(req kmsg.Request, resp kmsg.Response) {
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		if jr, ok := resp.(*kmsg.JoinGroupResponse); ok {
			o.ObserveJoin(r, jr)
		}
	case *kmsg.SyncGroupRequest:
		if sr, ok := resp.(*kmsg.SyncGroupResponse); ok && sr.ErrorCode == 0 {
			o.ObserveGeneration(r.Group, r.MemberID, r.Generation)
		}
	case *kmsg.HeartbeatRequest:
		hr, ok := resp.(*kmsg.HeartbeatResponse)
		switch {
		case !ok:
		case hr.ErrorCode == 0:
			o.ObserveGeneration(r.Group, r.MemberID, r.Generation)
		case hr.ErrorCode == kerr.RebalanceInProgress.Code:
			o.ObserveAlive(r.Group, r.MemberID)
		}
	case *kmsg.OffsetCommitRequest:
		cr, ok := resp.(*kmsg.OffsetCommitResponse)
		if !ok || r.Generation < 0 || r.MemberID == "" {
			return
		}
		for _, t := range cr.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					return
				}
			}
		}
		o.ObserveGeneration(r.Group, r.MemberID, r.Generation)
	}
}

// ObserveConn records the connection a member's JoinGroup, SyncGroup or
// Heartbeat came on (resp: the upstream's answer, nil for a request held at
// the gate; a first JoinGroup names its member only in the answer). The
// takeover carries it over (docs/fast-roll.md §2 rule 4): a member whose
// latest request's connection is closed, and whose process joins as a
// streams member, is replaced at once instead of kept until its session
// runs out. Commits do not count, as in the served group (member_conn.go).
func (o *ClassicObserver) ObserveConn(req kmsg.Request, resp kmsg.Response, connID uint64, closed <-chan struct{}) {
	var group, member string
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
		return
	}
	if group == "" || member == "" || closed == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	m := o.member(group, member)
	m.connID, m.closed = connID, closed
}

// ObserveHeld: a member's request held by a takeover's gate shows that its
// session is alive, as the upstream would have seen had it been forwarded.
func (o *ClassicObserver) ObserveHeld(group string, req kmsg.Request) {
	var member string
	rejoin := false
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		member, rejoin = r.MemberID, true
	case *kmsg.SyncGroupRequest:
		member, rejoin = r.MemberID, true
	case *kmsg.HeartbeatRequest:
		member = r.MemberID
	case *kmsg.OffsetCommitRequest:
		member = r.MemberID
	}
	o.ObserveAlive(group, member)
	if rejoin {
		o.mu.Lock()
		f := o.rejoining[group]
		o.mu.Unlock()
		if f != nil {
			f()
		}
	}
}

// Forget drops what is known of a group.
func (o *ClassicObserver) Forget(group string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.groups, group)
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
	o.mu.Lock()
	defer o.mu.Unlock()
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
		if om := o.groups[d.Group][dm.MemberID]; om != nil {
			if om.sessionMs > 0 {
				cm.SessionTimeoutMs, cm.RebalanceTimeoutMs = om.sessionMs, om.rebalanceMs
			}
			cm.LastHeartbeat = om.lastHeartbeat
			cm.Client.ConnID, cm.Client.Closed = om.connID, om.closed
			if om.haveGeneration {
				if haveGen && om.generation != gen {
					return st, fmt.Errorf("members of %s seen at generations %d and %d: %w", d.Group, gen, om.generation, ErrNotStable)
				}
				gen, haveGen = om.generation, true
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
