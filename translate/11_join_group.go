package translate

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator"
)

// JoinGroup serves a classic member's JoinGroup in a streams group. The
// answer is leaderless, as in Kafka's KIP-848 classic path: leader "", no
// member list (so the member never runs the Streams assignor), the member
// epoch as the generation, protocol "stream"; the assignment follows in
// SyncGroup.
func (t *Translator) JoinGroup(req *kmsg.JoinGroupRequest, client coordinator.ClientInfo, respond func(*kmsg.JoinGroupResponse), forward func()) {
	if !t.c.Owns(req.Group) {
		forward()
		return
	}
	// JoinGroup responses carry no error message; the codes say it all.
	fail := func(code *kerr.Error, memberID string) {
		resp := joinResponse(req)
		resp.ErrorCode = code.Code
		resp.MemberID = memberID
		resp.Generation = -1
		respond(resp)
	}
	instanceID := ""
	if req.InstanceID != nil {
		instanceID = *req.InstanceID
	}
	if req.Group == "" {
		fail(kerr.InvalidGroupID, req.MemberID)
		return
	}
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	if session < t.opts.MinSessionTimeout || session > t.opts.MaxSessionTimeout {
		fail(kerr.InvalidSessionTimeout, req.MemberID)
		return
	}
	sub, info, err := streamSubscription(req)
	if err != nil {
		// Not a Kafka Streams member, or metadata it cannot have meant.
		fail(kerr.InconsistentGroupProtocol, req.MemberID)
		return
	}
	memberID, isNew := req.MemberID, false
	if memberID == "" {
		memberID, isNew = t.opts.NewMemberID(client.ClientID), true
		if instanceID == "" && req.Version >= 4 {
			// A dynamic member learns its id first (KIP-394).
			t.addPending(memberID, session)
			fail(kerr.MemberIDRequired, memberID)
			return
		}
	} else if instanceID == "" {
		isNew = t.takePending(memberID)
	}
	rebalance := req.RebalanceTimeoutMillis
	if req.Version == 0 {
		rebalance = req.SessionTimeoutMillis
	}
	t.c.ClassicJoinGroup(coordinator.ClassicJoinRequest{
		GroupID: req.Group, MemberID: memberID, InstanceID: instanceID, Client: client,
		SessionTimeoutMs: req.SessionTimeoutMillis, RebalanceTimeoutMs: rebalance,
		Subscription: sub, Info: info, NewMember: isNew,
	}, func(res coordinator.ClassicJoinResult) {
		if errors.Is(res.Err, coordinator.ErrClassicNotServed) {
			forward()
			return
		}
		if isHeld(res.Err) {
			t.hold(req.Group, heldJoin{req: req, client: client, respond: respond, forward: forward})
			return
		}
		resp := joinResponse(req)
		if res.Err != nil {
			resp.ErrorCode, _ = errorCode(res.Err)
			resp.MemberID = memberID
			resp.Generation = -1
			respond(resp)
			return
		}
		resp.MemberID = res.MemberID
		resp.Generation = res.Generation
		name := coordinator.ClassicProtocolName
		resp.Protocol = &name
		respond(resp)
	})
}

func joinResponse(req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = req.Version
	pt := coordinator.ClassicProtocolType
	resp.ProtocolType = &pt
	resp.LeaderID = ""
	resp.Members = []kmsg.JoinGroupResponseMember{}
	return resp
}

// streamSubscription checks the protocol (type "consumer" with a "stream"
// protocol, what Kafka Streams joins with) and decodes its metadata.
func streamSubscription(req *kmsg.JoinGroupRequest) (*classicstreams.ConsumerSubscription, *classicstreams.SubscriptionInfo, error) {
	if req.ProtocolType != coordinator.ClassicProtocolType {
		return nil, nil, fmt.Errorf("protocol type %q: the group is a Kafka Streams group (%q)", req.ProtocolType, coordinator.ClassicProtocolType)
	}
	for _, p := range req.Protocols {
		if p.Name != coordinator.ClassicProtocolName {
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
	return nil, nil, fmt.Errorf("no %q protocol among the member's protocols: the group is a Kafka Streams group", coordinator.ClassicProtocolName)
}
