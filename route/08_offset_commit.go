package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/upstream/anchor"
)

// OffsetCommit (key 8): v0-v9 served, advertised up to v9 and capped
// there whatever the upstream speaks (versions.go: v10 names topics by id).
//
// By version:
//   - v0-v8 from a streams-protocol member of a group the proxy owns:
//     UNSUPPORTED_VERSION, as Kafka answers (a classic member of the group,
//     with the migration on, commits at its own version); of any other
//     group, forwarded (re-encoded at the upstream's newest version when
//     that is older).
//   - v9: an owned group's commit is validated as Kafka's streams group
//     validates it (member, epoch, the member's tasks), then forwarded
//     under the anchor's member id, generation and instance id (v7+
//     carries InstanceID); refused partitions are answered here.
//   - Offsets stay upstream at every version (DESIGN: offsets).

// offsetCommit serves OffsetCommit v0-v9, advertised up to v9 and capped
// there (offsetsMaxVersion): ownership, gate, validation and the anchor's
// rewrite are commit's. A commit held by a takeover's gate shows its
// member's session alive.
func (rs *Routes) offsetCommit(req *proxy.Request, r *kmsg.OffsetCommitRequest, out proxy.Outcome) {
	rs.commit(req, out, offsetCommitted(r, req.Version))
}

// offsetCommitted is how commit reads and answers an OffsetCommit of the
// client's version.
func offsetCommitted(r *kmsg.OffsetCommitRequest, version int16) anchoredCommit {
	sizes := make([]int, len(r.Topics))
	for ti, t := range r.Topics {
		sizes[ti] = len(t.Partitions)
	}
	return anchoredCommit{
		group:     r.Group,
		what:      "offset commit",
		heldAlive: true,
		sizes:     sizes,
		code:      kafkaCode,
		validation: func() streams.OffsetCommitRequest {
			return streams.OffsetCommitRequest{
				GroupID: r.Group, MemberID: r.MemberID, InstanceID: deref(r.InstanceID),
				MemberEpoch: r.Generation, Version: version,
				Partitions: commitPartitions(r.Topics, func(t kmsg.OffsetCommitRequestTopic, add func(string, int32)) {
					for _, p := range t.Partitions {
						add(t.Topic, p.Partition)
					}
				}),
			}
		},
		answer: func(code func(ti, pi int) (int16, bool)) kmsg.Response { return offsetCommitAnswer(r, code) },
		forward: func(keep [][]bool, gen anchor.Generation) kmsg.Request {
			fwd := *r
			fwd.Topics = keepPartitions(r.Topics, func(t *kmsg.OffsetCommitRequestTopic) *[]kmsg.OffsetCommitRequestTopicPartition { return &t.Partitions }, keep)
			fwd.Generation, fwd.MemberID, fwd.InstanceID = gen.Generation, gen.MemberID, &gen.InstanceID
			return &fwd
		},
		codes: func(resp kmsg.Response, visit func(*int16)) {
			cr := resp.(*kmsg.OffsetCommitResponse)
			for ti := range cr.Topics {
				for pi := range cr.Topics[ti].Partitions {
					visit(&cr.Topics[ti].Partitions[pi].ErrorCode)
				}
			}
		},
		merge: func(resp, refused kmsg.Response) kmsg.Response {
			cr := resp.(*kmsg.OffsetCommitResponse)
			cr.Topics = append(cr.Topics, refused.(*kmsg.OffsetCommitResponse).Topics...)
			return cr
		},
	}
}

// offsetCommitAnswer answers the partitions code selects, in request order.
func offsetCommitAnswer(r *kmsg.OffsetCommitRequest, code func(ti, pi int) (int16, bool)) *kmsg.OffsetCommitResponse {
	resp := kmsg.NewPtrOffsetCommitResponse()
	for ti, t := range r.Topics {
		rt := kmsg.OffsetCommitResponseTopic{Topic: t.Topic}
		for pi, p := range t.Partitions {
			if c, ok := code(ti, pi); ok {
				rt.Partitions = append(rt.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: c})
			}
		}
		// A topic without partitions is echoed, as Kafka's error responses do.
		if len(rt.Partitions) > 0 || len(t.Partitions) == 0 {
			resp.Topics = append(resp.Topics, rt)
		}
	}
	return resp
}
