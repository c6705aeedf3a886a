package proxyadapter

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
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
	var parts []coordinator.CommitPartition
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			parts = append(parts, coordinator.CommitPartition{Topic: t.Topic, Partition: p.Partition})
		}
	}
	vr := coordinator.OffsetCommitRequest{
		GroupID: r.Group, MemberID: r.MemberID, InstanceID: deref(r.InstanceID),
		MemberEpoch: r.Generation, Transactional: true, Version: req.Version, Partitions: parts,
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
	mapErr := func(err error) int16 {
		code := kafkaCode(err)
		if code == kerr.StaleMemberEpoch.Code && req.Version < 6 {
			return kerr.IllegalGeneration.Code
		}
		return code
	}
	if res.Err != nil {
		out.Respond(txnOffsetCommitAll(r, mapErr(res.Err)))
		return
	}
	refused := kmsg.NewPtrTxnOffsetCommitResponse()
	fwd := *r
	fwd.Topics = nil
	i := 0
	for _, t := range r.Topics {
		keep := t
		keep.Partitions = nil
		var rt *kmsg.TxnOffsetCommitResponseTopic
		for _, p := range t.Partitions {
			if err := res.Partitions[i]; err != nil {
				if rt == nil {
					refused.Topics = append(refused.Topics, kmsg.TxnOffsetCommitResponseTopic{Topic: t.Topic})
					rt = &refused.Topics[len(refused.Topics)-1]
				}
				rt.Partitions = append(rt.Partitions, kmsg.TxnOffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: mapErr(err)})
			} else {
				keep.Partitions = append(keep.Partitions, p)
			}
			i++
		}
		if len(keep.Partitions) > 0 {
			fwd.Topics = append(fwd.Topics, keep)
		}
	}
	if len(fwd.Topics) == 0 {
		out.Respond(refused)
		return
	}
	a.ensureAnchor(r.Group, nil)
	ctx, cancel := requestContext(req, a.o.AnchorWait)
	gen, err := a.o.Anchors.Generation(ctx, r.Group)
	cancel()
	if err != nil {
		a.o.Log.Warn().Str("group", r.Group).Err(err).Msg("transactional offset commit: no anchor member upstream yet")
		out.Respond(txnOffsetCommitAll(r, kerr.CoordinatorNotAvailable.Code))
		return
	}
	fwd.Generation = gen.Generation
	fwd.MemberID = gen.MemberID
	fwd.InstanceID = &gen.InstanceID
	out.ForwardRewritten(&fwd, min(req.Version, up), func(resp kmsg.Response) kmsg.Response {
		cr := resp.(*kmsg.TxnOffsetCommitResponse)
		fenced := false
		for ti := range cr.Topics {
			for pi := range cr.Topics[ti].Partitions {
				p := &cr.Topics[ti].Partitions[pi]
				if anchorFenced(p.ErrorCode) {
					p.ErrorCode = kerr.CoordinatorNotAvailable.Code
					fenced = true
				}
			}
		}
		if fenced {
			a.anchorFenced(r.Group, gen)
		}
		cr.Topics = append(cr.Topics, refused.Topics...)
		return cr
	})
}

func txnOffsetCommitAll(r *kmsg.TxnOffsetCommitRequest, code int16) *kmsg.TxnOffsetCommitResponse {
	resp := kmsg.NewPtrTxnOffsetCommitResponse()
	for _, t := range r.Topics {
		rt := kmsg.TxnOffsetCommitResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.TxnOffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: code})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
