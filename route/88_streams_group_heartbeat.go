package route

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
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
// The coordinator serves it if it holds the group, in one crossing of the
// group's queue (HeartbeatOptions.ServedOnly), as Kafka's operation decides
// UNKNOWN_MEMBER_ID itself; a join too, migration on or off (with it on, a
// join first waits out a hand-back's last steps, which crosses the group's
// queue only while the group is migrating). A group it does not hold:
//   - a join (epoch 0), with the migration on, takes a live classic group
//     upstream over (migration.Migration.MaybeTakeOver); else it asks the
//     upstream (Ownership.Claim), and is refused if the upstream has a live
//     classic group there; else the coordinator serves it, creating the
//     group;
//   - a member heartbeat (epoch > 0) means the proxy lost its state
//     (restart without a durable log): the member gets UNKNOWN_MEMBER_ID
//     and rejoins, never GROUP_ID_NOT_FOUND, which the Java client treats
//     as fatal; a leave (epoch < 0) of such a group succeeds.
//
// The internal topics the result names are created for the member if it
// may (authorize_topics.go) before it is answered. Every heartbeat
// carrying a topology (re)states the anchor's subscription.
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
	if m := rs.mig; m != nil && hb.MemberEpoch == 0 {
		if r := m.mig.Recovery(); r.Recovering(hb.Group) {
			// Its join ends the group's restart recovery.
			out = joinedOutcome{Outcome: out, r: r, group: hb.Group}
		}
		m.mig.WaitHandBack(hb.Group, req.Done())
	}
	if hb.MemberEpoch >= 0 {
		// Before the coordinator sees the heartbeat's topology (a
		// member heartbeat has none: nothing to do).
		rs.refreshFor(req, hb.Topology)
	}
	rs.o.Coordinator.Heartbeat(hb, coordinatorClient(req), coordinator.HeartbeatOptions{ServedOnly: true}, func(res coordinator.HeartbeatResult) {
		// On the group's queue: nothing here may wait for it.
		switch {
		case !res.NotServed:
			if hb.MemberEpoch >= 0 {
				rs.ensureAnchorFromQueue(hb.Group, topologyTopics(hb.Topology))
			}
			rs.answerHeartbeat(req, hb.Group, res, out.Respond)
		case hb.MemberEpoch > 0:
			// The coordinator itself must hold the group: a claim
			// alone (another member's join in flight) is not enough
			// for a member heartbeat, which the coordinator would
			// answer GROUP_ID_NOT_FOUND, as Kafka does.
			out.Respond(heartbeatError(hb, fmt.Errorf("streamshift holds no state of group %s (a restart?); rejoin: %w", hb.Group, kerr.UnknownMemberID)))
		case hb.MemberEpoch < 0:
			// A member leaving a group the proxy holds no state of (a
			// restart, or a member fenced by a commit after it) is
			// gone already: Kafka's leave answer, not
			// GROUP_ID_NOT_FOUND, which the Java client treats as
			// fatal even while leaving.
			resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
			resp.SetVersion(hb.Version)
			resp.MemberID, resp.MemberEpoch = hb.MemberID, hb.MemberEpoch
			resp.Status = []kmsg.StreamsGroupHeartbeatResponseStatus{}
			out.Respond(resp)
		default:
			go rs.joinNotServed(req, hb, out) // the takeover or the claim asks the upstream
		}
	})
}

// joinNotServed serves a join of a group the coordinator does not hold:
// with the migration on, a live classic group upstream is taken over (the
// takeover answers the join); otherwise the group is claimed and created.
func (rs *Routes) joinNotServed(req *proxy.Request, hb *kmsg.StreamsGroupHeartbeatRequest, out proxy.Outcome) {
	if m := rs.mig; m != nil {
		// The internal topics a takeover found missing are created for
		// this member as for any join: created while it waits with
		// status MISSING_INTERNAL_TOPICS.
		respond := func(res coordinator.HeartbeatResult) { rs.answerHeartbeat(req, hb.Group, res, out.Respond) }
		if m.mig.MaybeTakeOver(hb, coordinatorClient(req), req.Done(), respond) {
			return
		}
	}
	rs.joinNewGroup(req, hb, out)
}

// joinNewGroup serves a join of a group the coordinator does not hold: the
// proxy claims the group (unless a join in flight claimed it already) and
// the coordinator creates it.
func (rs *Routes) joinNewGroup(req *proxy.Request, hb *kmsg.StreamsGroupHeartbeatRequest, out proxy.Outcome) {
	if !rs.o.Ownership.Claimed(hb.Group) {
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
	rs.ensureAnchor(hb.Group, topologyTopics(hb.Topology))
	rs.o.Coordinator.Heartbeat(hb, coordinatorClient(req), coordinator.HeartbeatOptions{}, func(res coordinator.HeartbeatResult) {
		rs.answerHeartbeat(req, hb.Group, res, out.Respond)
	})
}

// ensureAnchorFromQueue is ensureAnchor for a caller on the group's queue:
// an anchor that needs the topology the coordinator holds starts off the
// queue (SourceTopics queues on it).
func (rs *Routes) ensureAnchorFromQueue(group string, topics []string) {
	if topics == nil && !rs.o.Anchors.Running(group) {
		go rs.ensureAnchor(group, nil)
		return
	}
	rs.o.Anchors.Ensure(group, topics)
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
