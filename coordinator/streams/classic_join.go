package streams

import (
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
)

// ClassicJoinRequest is a classic Kafka Streams member's JoinGroup, decoded:
// the consumer protocol subscription of its "stream" protocol and the
// SubscriptionInfo inside it. MemberID is never empty here: member ids are
// given out before (translate answers MEMBER_ID_REQUIRED).
type ClassicJoinRequest struct {
	GroupID            string
	MemberID           string
	InstanceID         string // "" for a dynamic member
	Client             ClientInfo
	SessionTimeoutMs   int32
	RebalanceTimeoutMs int32
	Subscription       *classicstreams.ConsumerSubscription
	Info               *classicstreams.SubscriptionInfo
	// NewMember: the caller gave MemberID out itself (MEMBER_ID_REQUIRED,
	// or a v0-v3 join without an id). A dynamic member id the group does
	// not know is otherwise a fenced member's: UNKNOWN_MEMBER_ID.
	NewMember bool
	// Reject, if set, is the answer for a served group instead of a join
	// (a request the caller found invalid, or MEMBER_ID_REQUIRED with
	// MemberID): only the coordinator knows whether the group is served,
	// and a group that is not gets the request forwarded untouched.
	// Subscription and Info may be nil then.
	Reject error
}

// ClassicJoinResult is the JoinGroup answer: the member id and its member
// epoch as the generation, or an error (ErrClassicNotServed, or a
// *kerr.Error wrapped with a message).
type ClassicJoinResult struct {
	Err        error
	MemberID   string
	Generation int32
	// CreatableTopics are the group's missing internal topics, for the
	// caller to create (coordinator.HeartbeatResult.CreatableTopics).
	CreatableTopics []CreatableTopic
}

// classicCode maps streams-heartbeat errors to what a classic member
// understands: FENCED_MEMBER_EPOCH has no classic meaning, its classic
// counterpart is ILLEGAL_GENERATION.
func classicCode(code *kerr.Error) *kerr.Error {
	if code == kerr.FencedMemberEpoch {
		return kerr.IllegalGeneration
	}
	return code
}

// classicHeartbeatRequest is the streams heartbeat a classic JoinGroup
// amounts to. The member brings no topology: it runs the group's.
func ClassicJoinHeartbeat(req ClassicJoinRequest, epoch int32) *kmsg.StreamsGroupHeartbeatRequest {
	hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	hb.Version = 1
	hb.Group = req.GroupID
	hb.MemberID = req.MemberID
	hb.MemberEpoch = epoch
	hb.RebalanceTimeoutMillis = req.RebalanceTimeoutMs
	if req.InstanceID != "" {
		hb.InstanceID = &req.InstanceID
	}
	rack := ""
	if req.Subscription.RackID != nil {
		rack = *req.Subscription.RackID
	}
	hb.RackID = &rack
	process := req.Info.ProcessID.String()
	hb.ProcessID = &process
	hb.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
	for _, t := range req.Info.ClientTags {
		hb.ClientTags = append(hb.ClientTags, kmsg.StreamsGroupHeartbeatRequestClientTag{Key: t.Key, Value: t.Value})
	}
	if e, err := classicstreams.ParseEndpoint(req.Info.UserEndPoint); err == nil && req.Info.UserEndPoint != "" {
		hb.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: e.Host, Port: uint16(e.Port)}
	}
	hb.ShutdownApplication = req.Info.ShutdownRequested()
	return hb
}

// classicOwnedTasks is what a classic member owns, as the streams heartbeat's
// owned task lists: the active tasks of its owned partitions (and running
// actives of its offset sums), restricted to tasks of the group's topology.
// Standby and warm-up tasks are what the group last gave it: a classic member
// drops a standby as soon as its assignment does, and its offset sums also
// list state left on disk, which it does not hold as a standby.
func classicOwnedTasks(req ClassicJoinRequest, topo *configuredTopology, cur *CurrentMemberAssignmentValue) (active, standby, warmup []kmsg.TaskIDs) {
	owned := TasksBuilder{}
	if tt := classicTaskTopology(topo); tt != nil {
		var tasks []classicstreams.TaskID
		if req.Info.Future {
			// Only the header of a future SubscriptionInfo is known.
			tasks, _ = classicstreams.OwnedActiveTasks(req.Subscription.OwnedPartitions, tt)
		} else if o, err := classicstreams.ClassifyOwnedTasks(req.Info, req.Subscription.OwnedPartitions, tt); err == nil {
			tasks = o.Active
		}
		for _, t := range tasks {
			sid := strconv.Itoa(int(t.Subtopology))
			if s := topo.SubtopologyByID(sid); s != nil && t.Partition >= 0 && t.Partition < s.NumTasks {
				owned.Add(sid, t.Partition)
			}
		}
	}
	return TasksToKmsg(owned.Build()), TasksToKmsg(cur.Assigned.Standby), TasksToKmsg(cur.Assigned.Warmup)
}

// classicTaskTopology is the configured topology in classicstreams' terms
// (each subtopology's source and repartition source topics); nil when the
// topology is not ready.
func classicTaskTopology(topo *configuredTopology) *classicstreams.TaskTopology {
	if !topo.IsReady() {
		return nil
	}
	return taskTopologyOf(topo)
}

// taskTopologyOf is the configured subtopologies in classicstreams' terms.
func taskTopologyOf(topo *configuredTopology) *classicstreams.TaskTopology {
	inputs := map[string][]string{}
	for _, s := range topo.ConfiguredSubtopologies {
		inputs[s.ID] = s.SourceTopics
	}
	tt, err := classicstreams.NewTaskTopologyFromStreams(inputs)
	if err != nil {
		return nil
	}
	return tt
}

// ClassicJoinGroup is the operation of a classic member's JoinGroup
// (Coordinator.ClassicJoinGroup): a streams heartbeat of the member,
// answered with the member epoch as the generation.
func (ch *Change) ClassicJoinGroup(req ClassicJoinRequest) ClassicJoinResult {
	g := ch.Group
	if g == nil || g.Topology == nil || len(g.Members) == 0 {
		return ClassicJoinResult{Err: ErrClassicNotServed}
	}
	if req.Reject != nil {
		return ClassicJoinResult{Err: req.Reject, MemberID: req.MemberID, Generation: -1}
	}
	if req.Info.Version >= 1 && len(req.Info.NamedTopologyTasks()) > 0 {
		return ClassicJoinResult{Err: fmt.Errorf("member %s reports named-topology tasks, which streams groups do not support: %w", req.MemberID, kerr.InconsistentGroupProtocol)}
	}
	ch.Classic = &ClassicMemberMetadata{
		SessionTimeoutMs:        req.SessionTimeoutMs,
		ConsumerProtocolVersion: req.Subscription.Version,
		SubscriptionVersion:     req.Info.Version,
		LatestSupportedVersion:  req.Info.LatestSupportedVersion,
	}

	// Who the member is: a known member rejoins at its epoch; a static
	// member with a new member id replaces the instance's old member, as
	// a classic group does (the old one is fenced by FENCED_INSTANCE_ID).
	m := g.Members[req.MemberID]
	if g.Mem.HandBack != nil && (m == nil || m.IsClassic()) {
		if len(req.Subscription.OwnedPartitions) == 0 && ch.handBackJoin(m) {
			// It owns nothing, here nor by its own account.
			ch.Commit()
			return ClassicJoinResult{Err: ErrHandBackHeld}
		}
		if m == nil && !g.Mem.HandBack.Aborted && !HasStreamsMember(g) {
			// A new member (or a static member's new incarnation) is
			// held too, outside the barrier: it goes upstream with the
			// members' JoinGroups, without the member id given here,
			// which the broker would answer UNKNOWN_MEMBER_ID. The
			// departed members it succeeds go: the barrier waits no
			// longer for them.
			if ch.successorAtBarrier(req.Info.ProcessID.String()) {
				ch.Commit()
			}
			return ClassicJoinResult{Err: ErrHandBackHeld}
		}
	}
	if req.InstanceID != "" {
		if owner, ok := g.StaticMembers[req.InstanceID]; ok && owner != req.MemberID {
			old := g.Members[owner]
			if !old.IsClassic() && old.MemberEpoch() != leaveGroupStaticMemberEpoch && ch.replacesStaticByInstance(old) {
				// Its streams owner is gone from the wire (replace.go).
				ch.releaseForReplacement(old, req.MemberID)
			}
			if !old.IsClassic() && old.MemberEpoch() != leaveGroupStaticMemberEpoch {
				return ClassicJoinResult{Err: fmt.Errorf("instance id %s is owned by streams member %s: %w", req.InstanceID, owner, kerr.UnreleasedInstanceID)}
			}
			if old.MemberEpoch() != leaveGroupStaticMemberEpoch {
				ch.releaseStatic(old)
			}
			m = nil
		}
	}
	if m == nil && req.InstanceID == "" && !req.NewMember {
		return ClassicJoinResult{Err: fmt.Errorf("member %s is not a member of group %s: %w", req.MemberID, g.ID, kerr.UnknownMemberID)}
	}
	if m != nil && !m.IsClassic() {
		return ClassicJoinResult{Err: fmt.Errorf("member %s of group %s uses the streams protocol: %w", m.ID, g.ID, kerr.InconsistentGroupProtocol)}
	}
	epoch := int32(0)
	if m != nil && m.MemberEpoch() > 0 {
		epoch = m.MemberEpoch()
	}

	// The owned partitions are read against the configured topology, made
	// current first: a member's ownership must never be missed.
	configured, _, err := ch.configureTopology(g.Topology)
	if err != nil {
		ch.RollBack()
		return ClassicJoinResult{Err: fmt.Errorf("join %s: %v: %w", g.ID, err, kerr.UnknownServerError)}
	}
	hb := ClassicJoinHeartbeat(req, epoch)
	cur := emptyCurrent
	if m != nil {
		cur = m.CurrentAssignment()
	}
	hb.ActiveTasks, hb.StandbyTasks, hb.WarmupTasks = classicOwnedTasks(req, configured, cur)
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	if err := ch.Heartbeat(hb, req.Client, resp); err != nil {
		ch.RollBack()
		var ce *CoordError
		if errors.As(err, &ce) {
			return ClassicJoinResult{Err: fmt.Errorf("%s: %w", ce.Msg, classicCode(ce.Code))}
		}
		return ClassicJoinResult{Err: fmt.Errorf("join %s: %v: %w", g.ID, err, kerr.UnknownServerError)}
	}
	m = g.Members[resp.MemberID]
	m.Report = classicOffsetReport(req.Info, ch.Now)
	if g.Mem.HandBack != nil && ch.handBackJoin(m) {
		// At a hand-back barrier: the join reconciled the member to
		// nothing (it revoked everything): held now.
		ch.Commit()
		return ClassicJoinResult{Err: ErrHandBackHeld}
	}
	ch.cancel(classicJoinTimerKey(m.ID))
	ch.scheduleClassicTimeout(classicSyncTimerKey(m.ID), m, ClassicSyncTimeoutReason, nil)
	ch.Commit()
	return ClassicJoinResult{MemberID: m.ID, Generation: resp.MemberEpoch}
}

// A classic JoinGroup answered in one round, beyond Kafka 4.4 (issue #28,
// docs/fast-roll.md §12). A step back of a rolling migration (streams →
// classic) stops a 4.4 streams instance, which leaves (epoch -1): its tasks
// go to the other members at once. Its classic successor then joins with
// nothing, and its target takes its share back from those members. Kafka's
// rule (classicGroupJoinToConsumerGroup) answers the join at once with what
// is free, which is nothing yet: the others revoke at their next heartbeat,
// and the classic member learns that they did only at its next classic
// Heartbeat (heartbeat.interval.ms, 3 s), which answers REBALANCE_IN_PROGRESS;
// only its second JoinGroup and SyncGroup give it its tasks. The classic
// protocol's own coordinator holds a JoinGroup until the rebalance can
// complete, bounded by the rebalance timeout; here the coordinator holds the
// join of the departed member's successor until the tasks its target gives
// it are released (ClassicJoinWaiting), and then runs the join again as if
// the member had rejoined at that moment: one round, one answer.
//
// Held is only the first join after a streams member left a migrating
// group (SuccessorJoin, successor_watch.go), and only if it owns no active
// task: it processes nothing while it waits, so no transaction of it stays
// open and no commit is delayed (a held cooperative member would keep
// processing with an open transaction). Every other classic join is
// answered at once, as Kafka's classicGroupJoinToConsumerGroup does.

// classicMustRejoin: would a JoinGroup of the member change its assignment?
func classicMustRejoin(g *Group, m *Member) bool {
	cur := m.CurrentAssignment()
	switch {
	case cur.MemberEpoch < g.GroupEpoch, cur.State == MemberUnrevokedTasks:
		return true
	case cur.State == MemberUnreleasedTasks:
		owned := cur.Assigned
		next, err := reconcile(cur, m.ProcessID(), g.AssignmentEpoch, g.Target[m.ID], &owned, g)
		return err == nil && !next.Assigned.Equal(cur.Assigned)
	}
	return false
}

// ClassicJoinWaiting: is the classic member memberID waiting for active or
// standby tasks of its target that other members still hold, with nothing
// a JoinGroup could give it now? False once those members released a task
// it waits for, when the group epoch moved past it, when a hand-back
// barrier is up (a join then goes to the barrier), and for a member that
// is not (or no longer) a classic member of the group.
func ClassicJoinWaiting(g *Group, memberID string) bool {
	if g == nil || g.Mem.HandBack != nil {
		return false
	}
	m := g.Members[memberID]
	if m == nil || !m.IsClassic() {
		return false
	}
	return m.CurrentAssignment().State == MemberUnreleasedTasks && !classicMustRejoin(g, m)
}

// ClassicJoinHold is how long a classic JoinGroup may be held waiting for
// its tasks: half the member's session timeout, and never past its
// rebalance timeout. A classic consumer sends no Heartbeat while its
// JoinGroup is in flight, and unlike Kafka's classic coordinator (which
// keeps a member awaiting its join alive) the member's session timer runs
// on here: half of it leaves the member its session after the answer.
// Zero for a member that must not be held.
func ClassicJoinHold(req ClassicJoinRequest) time.Duration {
	if req.Subscription == nil || len(req.Subscription.OwnedPartitions) > 0 {
		return 0
	}
	d := time.Duration(req.SessionTimeoutMs) * time.Millisecond / 2
	if r := time.Duration(req.RebalanceTimeoutMs) * time.Millisecond; r < d {
		d = r
	}
	return max(d, 0)
}

// HoldClassicJoin decides whether the classic JoinGroup this change served
// (res) is held (see above): served without error, asking for no
// internal topic, its member waiting for tasks others hold, and either the
// first join of a departed member's successor (until zero: the hold starts
// now, for ClassicJoinHold(req)) or a held join run again before its
// bound (until). Its bound is a timer the runtime arms once the change is
// in the log (Hold.Timer).
func (ch *Change) HoldClassicJoin(req ClassicJoinRequest, res ClassicJoinResult, until time.Time) (Hold, bool) {
	g := ch.Group
	if res.Err != nil || len(res.CreatableTopics) > 0 || !ClassicJoinWaiting(g, res.MemberID) {
		return Hold{}, false
	}
	if until.IsZero() {
		if !SuccessorJoin(g, res.MemberID) {
			return Hold{}, false
		}
		d := ClassicJoinHold(req)
		if d <= 0 {
			return Hold{}, false
		}
		until = ch.Now.Add(d)
	}
	if !ch.Now.Before(until) {
		return Hold{}, false
	}
	return Hold{Key: HoldKey{Member: res.MemberID}, Until: until}, true
}

// ReleaseEnded releases each held classic JoinGroup (held: the keys the
// runtime holds for the group) whose member waits no more
// (ClassicJoinWaiting): a member released a task it waits for, the group
// epoch moved past it, a hand-back began, or it is no (classic) member of
// the group any more. The runtime calls it once a change is in the group
// (committed, or one that writes nothing); a change rolled back leaves the
// group as it was, and its waits with it.
func (ch *Change) ReleaseEnded(held iter.Seq[HoldKey]) {
	for key := range held {
		if !ClassicJoinWaiting(ch.Group, key.Member) {
			ch.release(key)
		}
	}
}
