package translate

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// JoinGroup (key 11): the upstream's versions (v0-v9 kmsg knows), routed by
// route/classic.go with the migration on, unadvertised; this file is the
// key's only one: what a classic member's join becomes in a streams group.
//
// By version:
//   - v0: no rebalance timeout: the session timeout stands for it.
//   - v4+: a member without an id gets MEMBER_ID_REQUIRED first (KIP-394);
//     a static member (v5+, group.instance.id) joins at once.
//   - v7+: the response carries the protocol type; v9's SkipAssignment is
//     not used: the answer is leaderless at every version.

// JoinGroup serves a classic member's JoinGroup in a streams group. The
// answer is leaderless, as in Kafka's KIP-848 classic path: leader "", no
// member list (so the member never runs the Streams assignor), the member
// epoch as the generation, protocol "stream"; the assignment follows in
// SyncGroup.
//
// The internal topics the join finds missing go to create.
func (t *Translator) JoinGroup(req *kmsg.JoinGroupRequest, client streams.ClientInfo, respond func(*kmsg.JoinGroupResponse), create CreateTopics, forward Forward) {
	instanceID := ""
	if req.InstanceID != nil {
		instanceID = *req.InstanceID
	}
	jr := streams.ClassicJoinRequest{
		GroupID: req.Group, MemberID: req.MemberID, InstanceID: instanceID, Client: client,
		SessionTimeoutMs: req.SessionTimeoutMillis, RebalanceTimeoutMs: req.RebalanceTimeoutMillis,
	}
	if req.Version == 0 {
		jr.RebalanceTimeoutMs = req.SessionTimeoutMillis
	}
	// What is wrong with the request is answered only if the group is
	// served here (Reject); otherwise it goes upstream untouched.
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	var err error
	switch {
	case req.Group == "":
		jr.Reject = kerr.InvalidGroupID
	case session < t.opts.MinSessionTimeout || session > t.opts.MaxSessionTimeout:
		jr.Reject = fmt.Errorf("session timeout %v is outside [%v, %v]: %w", session, t.opts.MinSessionTimeout, t.opts.MaxSessionTimeout, kerr.InvalidSessionTimeout)
	default:
		// Not a Kafka Streams member, or metadata it cannot have meant.
		if jr.Subscription, jr.Info, err = streamSubscription(req); err != nil {
			jr.Reject = fmt.Errorf("%v: %w", err, kerr.InconsistentGroupProtocol)
		} else if untestedRelease(jr.Info) {
			t.opts.Log.Warn().Str("group", req.Group).Str("member", req.MemberID).Str("client_id", client.ClientID).
				Int32("subscription_version", jr.Info.Version).Int32("latest_supported_version", jr.Info.LatestSupportedVersion).
				Msg("classic member of a kafka-streams release older than 2.8 (SubscriptionInfo below v9): decoded and served, but untested")
		}
	}
	if jr.Reject == nil {
		if jr.MemberID == "" {
			jr.MemberID, jr.NewMember = t.opts.NewMemberID(client.ClientID), true
			if instanceID == "" && req.Version >= 4 {
				// A dynamic member learns its id first (KIP-394).
				jr.Reject = kerr.MemberIDRequired
			}
		} else if instanceID == "" {
			jr.NewMember = t.isPending(jr.MemberID)
		}
	}
	t.c.ClassicJoinGroup(jr, func(res streams.ClassicJoinResult) {
		t.create(req.Group, res.CreatableTopics, create)
		if errors.Is(res.Err, streams.ErrClassicNotServed) {
			t.ForwardJoin(req, forward)
			return
		}
		if errors.Is(res.Err, streams.ErrHandBackHeld) {
			t.hold(HeldJoin{Req: req, Client: client, Respond: respond, Create: create, Forward: forward})
			return
		}
		if errors.Is(res.Err, kerr.MemberIDRequired) {
			t.addPending(jr.MemberID, session)
		} else if jr.NewMember && res.Err == nil {
			t.dropPending(jr.MemberID)
		}
		resp := joinResponse(req)
		if res.Err != nil {
			// JoinGroup responses carry no error message.
			resp.ErrorCode, _ = errorCode(res.Err)
			resp.MemberID = jr.MemberID
			resp.Generation = -1
			respond(resp)
			return
		}
		resp.MemberID = res.MemberID
		resp.Generation = res.Generation
		name := streams.ClassicProtocolName
		resp.Protocol = &name
		respond(resp)
	})
}

// hold hands a JoinGroup held at a hand-back's barrier to the hand-back;
// without one, the member is told to rejoin.
func (t *Translator) hold(j HeldJoin) {
	if t.opts.HandBack != nil {
		t.opts.HandBack.Hold(j)
		return
	}
	resp := joinResponse(j.Req)
	resp.ErrorCode, resp.MemberID, resp.Generation = kerr.RebalanceInProgress.Code, j.Req.MemberID, -1
	j.Respond(resp)
}

func joinResponse(req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = req.Version
	pt := streams.ClassicProtocolType
	resp.ProtocolType = &pt
	resp.LeaderID = ""
	resp.Members = []kmsg.JoinGroupResponseMember{}
	return resp
}

// untestedRelease: the member runs a kafka-streams release older than 2.8,
// the oldest classic client the e2e suite migrates (SubscriptionInfo v9;
// a member pinned lower by upgrade.from still supports v9). Its metadata
// decodes (v1-v11), but nothing proves the migration for it.
func untestedRelease(info *classicstreams.SubscriptionInfo) bool {
	return max(info.Version, info.LatestSupportedVersion) < 9
}

// streamSubscription checks the protocol (type "consumer" with a "stream"
// protocol, what Kafka Streams joins with) and decodes its metadata.
func streamSubscription(req *kmsg.JoinGroupRequest) (*classicstreams.ConsumerSubscription, *classicstreams.SubscriptionInfo, error) {
	if req.ProtocolType != streams.ClassicProtocolType {
		return nil, nil, fmt.Errorf("protocol type %q: the group is a Kafka Streams group (%q)", req.ProtocolType, streams.ClassicProtocolType)
	}
	for _, p := range req.Protocols {
		if p.Name != streams.ClassicProtocolName {
			continue
		}
		sub, err := classicstreams.DecodeConsumerSubscription(p.Metadata)
		if err != nil {
			return nil, nil, fmt.Errorf("protocol %s metadata: %w", p.Name, err)
		}
		info, err := classicstreams.DecodeSubscriptionInfo(sub.UserData)
		if err != nil {
			return nil, nil, fmt.Errorf("protocol %s SubscriptionInfo: %w", p.Name, err)
		}
		return sub, info, nil
	}
	return nil, nil, fmt.Errorf("no %q protocol among the member's protocols: the group is a Kafka Streams group", streams.ClassicProtocolName)
}

// ForwardJoin forwards a JoinGroup of a group not served here. A member id
// this translator gave out (MEMBER_ID_REQUIRED) and the member has not
// joined with yet means nothing to the broker, which would answer
// UNKNOWN_MEMBER_ID: the join goes without it, so the broker gives the
// member an id of its own (MEMBER_ID_REQUIRED). That happens to an instance
// that learnt its id just before its group was handed back, and to a
// member whose JoinGroup was held for a hand-back (HandedBack) and who sends
// it again after the group was handed back.
//
// The id stays pending until the broker answers that join with anything
// but a coordinator error: a member told NOT_COORDINATOR,
// COORDINATOR_NOT_AVAILABLE or COORDINATOR_LOAD_IN_PROGRESS (the broker's
// group coordinator moving, issue #41) finds the coordinator again and
// sends the same join, with the same id, as often as the error lasts.
func (t *Translator) ForwardJoin(req *kmsg.JoinGroupRequest, forward Forward) {
	if req.MemberID == "" || !t.isPending(req.MemberID) {
		forward(nil, nil)
		return
	}
	id := req.MemberID
	anon := *req
	anon.MemberID = ""
	forward(&anon, func(resp kmsg.Response) {
		if j, ok := resp.(*kmsg.JoinGroupResponse); ok && coordinatorMoving(j.ErrorCode) {
			return
		}
		t.dropPending(id)
	})
}

// coordinatorMoving reports whether code is an error a Kafka client answers
// by finding the group's coordinator again and retrying the same request.
func coordinatorMoving(code int16) bool {
	switch code {
	case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code:
		return true
	}
	return false
}

// HandedBack remembers the member id of a JoinGroup a hand-back sent
// upstream without it, for as long as the member may send that JoinGroup
// again (issue #41): a member connected to another instance gets a
// retriable error when its hop ends before the held join's answer (the
// link's timeout, a lost link) and rejoins with the id streamshift gave
// it, which the broker's group never had (UNKNOWN_MEMBER_ID, a wasted
// rebalance). ForwardJoin sends such a join without it, as the held one
// went.
func (t *Translator) HandedBack(id string, d time.Duration) {
	if id != "" {
		t.addPending(id, d)
	}
}
