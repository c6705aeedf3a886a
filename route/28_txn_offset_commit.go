package route

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/upstream/anchor"
)

// TxnOffsetCommit (key 28): v0-v5 at most (the upstream's range up to v5,
// capped there: v6 names topics by id, versions.go), unadvertised.
//
// By version:
//   - v0-v2: no member fields: an owned group's commit is not checked
//     against a member, as Kafka checks none, and is forwarded under the
//     anchor.
//   - v3+: member id and generation (KIP-447): validated as the member's
//     epoch, then rewritten to the anchor's; a stale epoch is
//     ILLEGAL_GENERATION below v6, as Kafka answers.

// txnOffsetCommit serves TxnOffsetCommit at the upstream's versions up to
// v5, capped there (txnOffsetsMaxVersion), unadvertised: the commit of
// exactly-once Streams, validated against the streams group, then rewritten
// to the anchor's member id and generation (v3+), or to no member while the
// anchor is not a member upstream (memberNone), and forwarded on the
// client's own connection, whose producer id and epoch the broker checks as
// usual (commit). As in Kafka, STALE_MEMBER_EPOCH is reported as
// ILLEGAL_GENERATION below v6.
func (rs *Routes) txnOffsetCommit(req *proxy.Request, r *kmsg.TxnOffsetCommitRequest, out proxy.Outcome) {
	rs.commit(req, out, txnOffsetCommitted(r, req.Version))
}

// txnOffsetCommitted is how commit reads and answers a TxnOffsetCommit of
// the client's version.
func txnOffsetCommitted(r *kmsg.TxnOffsetCommitRequest, version int16) anchoredCommit {
	sizes := make([]int, len(r.Topics))
	for ti, t := range r.Topics {
		sizes[ti] = len(t.Partitions)
	}
	return anchoredCommit{
		group: r.Group,
		what:  "transactional offset commit",
		sizes: sizes,
		// Kafka accepts a transactional commit without a member in
		// every group state (memberNone): it need not wait for the
		// anchor.
		memberless: true,
		code: func(err error) int16 {
			c := kafkaCode(err)
			if c == kerr.StaleMemberEpoch.Code && version < 6 {
				return kerr.IllegalGeneration.Code
			}
			return c
		},
		validation: func() streams.OffsetCommitRequest {
			vr := streams.OffsetCommitRequest{
				GroupID: r.Group, MemberID: r.MemberID, InstanceID: deref(r.InstanceID),
				MemberEpoch: r.Generation, Transactional: true, Version: version,
				Partitions: commitPartitions(r.Topics, func(t kmsg.TxnOffsetCommitRequestTopic, add func(string, int32)) {
					for _, p := range t.Partitions {
						add(t.Topic, p.Partition)
					}
				}),
			}
			if version < 3 {
				// No member fields before v3: Kafka checks nothing either.
				vr.MemberEpoch, vr.MemberID, vr.InstanceID = -1, "", ""
			}
			return vr
		},
		answer: func(code func(ti, pi int) (int16, bool)) kmsg.Response { return txnOffsetCommitAnswer(r, code) },
		forward: func(keep [][]bool, gen anchor.Generation) kmsg.Request {
			fwd := *r
			fwd.Topics = keepPartitions(r.Topics, func(t *kmsg.TxnOffsetCommitRequestTopic) *[]kmsg.TxnOffsetCommitRequestTopicPartition {
				return &t.Partitions
			}, keep)
			fwd.Generation, fwd.MemberID, fwd.InstanceID = gen.Generation, gen.MemberID, &gen.InstanceID
			if gen == memberNone {
				fwd.InstanceID = nil
			}
			return &fwd
		},
		codes: func(resp kmsg.Response, visit func(*int16)) {
			cr := resp.(*kmsg.TxnOffsetCommitResponse)
			for ti := range cr.Topics {
				for pi := range cr.Topics[ti].Partitions {
					visit(&cr.Topics[ti].Partitions[pi].ErrorCode)
				}
			}
		},
		merge: func(resp, refused kmsg.Response) kmsg.Response {
			cr := resp.(*kmsg.TxnOffsetCommitResponse)
			cr.Topics = append(cr.Topics, refused.(*kmsg.TxnOffsetCommitResponse).Topics...)
			return cr
		},
	}
}

// txnOffsetCommitAnswer answers the partitions code selects, in request order.
func txnOffsetCommitAnswer(r *kmsg.TxnOffsetCommitRequest, code func(ti, pi int) (int16, bool)) *kmsg.TxnOffsetCommitResponse {
	resp := kmsg.NewPtrTxnOffsetCommitResponse()
	for ti, t := range r.Topics {
		rt := kmsg.TxnOffsetCommitResponseTopic{Topic: t.Topic}
		for pi, p := range t.Partitions {
			if c, ok := code(ti, pi); ok {
				rt.Partitions = append(rt.Partitions, kmsg.TxnOffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: c})
			}
		}
		// A topic without partitions is echoed, as Kafka's error responses do.
		if len(rt.Partitions) > 0 || len(t.Partitions) == 0 {
			resp.Topics = append(resp.Topics, rt)
		}
	}
	return resp
}
