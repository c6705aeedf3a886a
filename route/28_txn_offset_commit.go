package route

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/anchor"
	"github.com/streamshift/streamshift/proxy"
)

// txnOffsetCommit is offsetCommit for transactional commits (exactly-once
// Streams): validated against the streams group, then rewritten to the
// anchor's member id and generation (v3+) and forwarded on the client's own
// connection, whose producer id and epoch the broker checks as usual. As in
// Kafka, STALE_MEMBER_EPOCH is reported as ILLEGAL_GENERATION below v6.
func (a *Adapter) txnOffsetCommit(req *proxy.Request, out proxy.Outcome) {
	r := req.Body.(*kmsg.TxnOffsetCommitRequest)
	up := a.upstreamMax(req.Key)
	if !a.o.Ownership.Owns(r.Group) {
		forwardAt(req, out, up)
		return
	}
	vr := coordinator.OffsetCommitRequest{
		GroupID: r.Group, MemberID: r.MemberID, InstanceID: deref(r.InstanceID),
		MemberEpoch: r.Generation, Transactional: true, Version: req.Version,
		Partitions: commitPartitions(r.Topics, func(t kmsg.TxnOffsetCommitRequestTopic, add func(string, int32)) {
			for _, p := range t.Partitions {
				add(t.Topic, p.Partition)
			}
		}),
	}
	if req.Version < 3 {
		// No member fields before v3: Kafka checks nothing either.
		vr.MemberEpoch, vr.MemberID, vr.InstanceID = -1, "", ""
	}
	a.o.Coordinator.ValidateOffsetCommit(vr, func(res coordinator.OffsetCommitResult) {
		go a.txnOffsetCommitValidated(req, out, r, res, up)
	})
}

func (a *Adapter) txnOffsetCommitValidated(req *proxy.Request, out proxy.Outcome, r *kmsg.TxnOffsetCommitRequest, res coordinator.OffsetCommitResult, up int16) {
	if errors.Is(res.Err, kerr.GroupIDNotFound) {
		forwardAt(req, out, up)
		return
	}
	code := func(err error) int16 {
		c := kafkaCode(err)
		if c == kerr.StaleMemberEpoch.Code && req.Version < 6 {
			return kerr.IllegalGeneration.Code
		}
		return c
	}
	if res.Err != nil {
		c := code(res.Err)
		out.Respond(txnOffsetCommitAnswer(r, func(int, int) (int16, bool) { return c, true }))
		return
	}
	sizes := make([]int, len(r.Topics))
	for ti, t := range r.Topics {
		sizes[ti] = len(t.Partitions)
	}
	a.forwardAsAnchor(req, out, up, anchoredCommit{
		group:  r.Group,
		what:   "transactional offset commit",
		code:   code,
		answer: func(code func(ti, pi int) (int16, bool)) kmsg.Response { return txnOffsetCommitAnswer(r, code) },
		forward: func(keep [][]bool, gen anchor.Generation) kmsg.Request {
			fwd := *r
			fwd.Topics = keepPartitions(r.Topics, func(t *kmsg.TxnOffsetCommitRequestTopic) *[]kmsg.TxnOffsetCommitRequestTopicPartition {
				return &t.Partitions
			}, keep)
			fwd.Generation, fwd.MemberID, fwd.InstanceID = gen.Generation, gen.MemberID, &gen.InstanceID
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
	}, byTopic(res.Partitions, sizes))
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
