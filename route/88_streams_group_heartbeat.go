package route

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/proxy"
)

// StreamsGroupHeartbeat (key 88): v0-v1, advertised whatever the upstream
// speaks (the proxy is the streams-group coordinator), body limited to
// maxStreamsHeartbeatBytes (answered undecoded above it).
//
// By version: v1 adds AcceptableRecoveryLag (the group's warm-up lag, sent)
// and TopologyDescriptionRequired (never set: no topology description is
// stored) to the response; the request is the same.

// maxStreamsHeartbeatBytes is the largest StreamsGroupHeartbeat the proxy
// decodes. What a heartbeat carries becomes records of at most
// streams.MaxRecordBytes each (its topology, its member's metadata, its
// owned tasks in the member's assignment); only the task offsets it reports
// are not stored, and a member reports them for its own tasks. A request
// four times a record's bound cannot be written by Kafka 4.4 either, which
// decodes it first and then answers UNKNOWN_SERVER_ERROR; the proxy answers
// the same without decoding it (decoding takes about 7 times the request's
// size: the budget charge of intercepted requests, proxy.LimitBody).
const maxStreamsHeartbeatBytes = 4 * streams.MaxRecordBytes

// oversizedStreamsHeartbeat answers a heartbeat above maxStreamsHeartbeatBytes.
func oversizedStreamsHeartbeat(_ int16, size int) kmsg.Response {
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.ErrorCode = kerr.UnknownServerError.Code
	msg := fmt.Sprintf("The StreamsGroupHeartbeat request is %d bytes; its topology, member metadata and tasks cannot fit the coordinator's records of at most %d bytes each (at most %d bytes in all are read).",
		size, streams.MaxRecordBytes, maxStreamsHeartbeatBytes)
	resp.ErrorMessage = &msg
	return resp
}

// streamsGroupHeartbeat serves StreamsGroupHeartbeat v0-v1, advertised
// whatever the upstream knows (the proxy is the streams-group coordinator).
// With the migration on, a join of a live classic group upstream first
// takes it over (migration.Migration.MaybeTakeOver).
// Then the heartbeat is gated on ownership before the coordinator serves it:
//   - a join (epoch 0) of a group the proxy does not serve yet asks the
//     upstream first (Ownership.Claim), and is refused if the upstream has a
//     live classic group there;
//   - a member heartbeat (epoch > 0) of a group the proxy does not know
//     means the proxy lost its state (restart without a durable log): the
//     member gets UNKNOWN_MEMBER_ID and rejoins, never GROUP_ID_NOT_FOUND,
//     which the Java client treats as fatal; a leave (epoch < 0) of such a
//     group succeeds.
//
// Every heartbeat carrying a topology (re)states the anchor's subscription.
func (rs *Routes) streamsGroupHeartbeat(req *proxy.Request, hb *kmsg.StreamsGroupHeartbeatRequest, out proxy.Outcome) {
	// The broker's ACLs first, for the client's own principal, as Kafka
	// checks them before its group coordinator sees the request
	// (authorize_streams.go).
	if resp := rs.authorizeStreamsHeartbeat(req, hb); resp != nil {
		out.Respond(resp)
		return
	}
	// Kafka's request validation, with the bounds of the records the
	// heartbeat would write (coordinator/streams/record_bounds.go), before
	// any work for it: a takeover, an ownership claim, an anchor member.
	if resp := streams.ValidateHeartbeat(hb); resp != nil {
		out.Respond(resp)
		return
	}
	if m := rs.mig; m != nil {
		if r := m.mig.Recovery(); hb.MemberEpoch == 0 && r.Recovering(hb.Group) {
			// Its join ends the group's restart recovery.
			out = joinedOutcome{Outcome: out, r: r, group: hb.Group}
		}
		// The internal topics a takeover asked for are decided for this
		// member as for any join (authorize_topics.go): created while
		// it waits with status MISSING_INTERNAL_TOPICS.
		answer := rs.answerAfterCreation(req, hb.Group, internalTopicNames(hb.Topology), out.Respond)
		respond := func(resp *kmsg.StreamsGroupHeartbeatResponse) { answer(resp) }
		if m.mig.MaybeTakeOver(hb, coordinatorClient(req), req.Done(), respond) {
			return
		}
	}
	// The coordinator itself must hold the group: a claim alone (another
	// member's join in flight) is not enough for a member heartbeat, which
	// the coordinator would answer GROUP_ID_NOT_FOUND, as Kafka does.
	if hb.Group != "" && hb.MemberEpoch > 0 && !rs.o.Coordinator.Owns(hb.Group) {
		out.Respond(heartbeatError(hb, fmt.Errorf("streamshift holds no state of group %s (a restart?); rejoin: %w", hb.Group, kerr.UnknownMemberID)))
		return
	}
	// A member leaving a group the proxy holds no state of (a restart, or a
	// member fenced by a commit after it) is gone already: Kafka's leave
	// answer, not GROUP_ID_NOT_FOUND, which the Java client treats as fatal
	// even while leaving.
	if hb.Group != "" && hb.MemberEpoch < 0 && !rs.o.Coordinator.Owns(hb.Group) {
		resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
		resp.SetVersion(hb.Version)
		resp.MemberID, resp.MemberEpoch = hb.MemberID, hb.MemberEpoch
		resp.Status = []kmsg.StreamsGroupHeartbeatResponseStatus{}
		out.Respond(resp)
		return
	}
	if hb.Group != "" && hb.MemberEpoch == 0 && !rs.o.Ownership.Owns(hb.Group) {
		ctx, cancel := requestContext(req, rs.o.ClaimWait)
		err := rs.o.Ownership.Claim(ctx, hb.Group)
		cancel()
		if err != nil {
			rs.o.Log.Info().Str("group", hb.Group).Err(err).Msg("streams join refused")
			out.Respond(heartbeatError(hb, err))
			return
		}
		rs.o.Log.Info().Str("group", hb.Group).Msg("group is now served by streamshift")
	}
	if hb.Group != "" && hb.MemberEpoch >= 0 {
		rs.ensureAnchor(hb.Group, topologyTopics(hb.Topology))
		rs.refreshFor(req, hb.Topology)
	}
	rs.o.Coordinator.Handle(hb, coordinatorClient(req), rs.answerAfterCreation(req, hb.Group, internalTopicNames(hb.Topology), out.Respond))
}

// ensureAnchor starts or updates the group's anchor. Without a topology in
// the request (a member heartbeat, a commit) a new anchor subscribes to the
// topology the coordinator holds (loaded from a durable log after a
// restart).
func (rs *Routes) ensureAnchor(group string, topics []string) {
	if topics == nil && !rs.o.Anchors.Running(group) {
		topics = rs.o.Coordinator.SourceTopics(group)
	}
	rs.o.Anchors.Ensure(group, topics)
}

// refreshFor fetches the upstream's topics now if a source topic of the
// topology is unknown: the member would otherwise learn MISSING_SOURCE_TOPICS
// and wait a heartbeat interval. The group's queue is not involved.
func (rs *Routes) refreshFor(req *proxy.Request, t *kmsg.StreamsGroupHeartbeatRequestTopology) {
	if rs.o.Metadata == nil || t == nil {
		return
	}
	img := rs.o.Metadata.Image()
	for _, s := range t.Subtopologies {
		for _, topic := range s.SourceTopics {
			if _, ok := img.Topic(topic); !ok {
				ctx, cancel := requestContext(req, 2*time.Second)
				defer cancel()
				if err := rs.o.Metadata.Refresh(ctx); err != nil {
					rs.o.Log.Debug().Err(err).Msg("metadata refresh for a new topology")
				}
				return
			}
		}
	}
}

// topologyTopics lists the topics the anchor subscribes to: every source
// and repartition topic of the topology; nil without a topology.
func topologyTopics(t *kmsg.StreamsGroupHeartbeatRequestTopology) []string {
	if t == nil {
		return nil
	}
	out := []string{}
	for _, s := range t.Subtopologies {
		out = append(out, s.SourceTopics...)
		for _, r := range s.RepartitionSourceTopics {
			out = append(out, r.Topic)
		}
	}
	return out
}

func heartbeatError(hb *kmsg.StreamsGroupHeartbeatRequest, err error) *kmsg.StreamsGroupHeartbeatResponse {
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.SetVersion(hb.Version)
	msg := err.Error()
	resp.ErrorCode = kafkaCode(err)
	resp.ErrorMessage = &msg
	return resp
}
