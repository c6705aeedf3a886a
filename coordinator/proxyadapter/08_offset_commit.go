package proxyadapter

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/anchor"
	"github.com/streamshift/streamshift/proxy"
)

// offsetCommit: a commit to a group the proxy does not serve goes upstream
// untouched (down-converted if the upstream is older). A commit to an owned
// group is validated as Kafka 4.4's streams group does, then rewritten to
// the anchor's member id and generation and forwarded on the client's own
// upstream connection; partitions the validation refused are answered
// locally and merged into the upstream's response.
func (a *Adapter) offsetCommit(req *proxy.Request, out proxy.Outcome) {
	r := req.Body.(*kmsg.OffsetCommitRequest)
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
		MemberEpoch: r.Generation, Version: req.Version, Partitions: parts,
	}
	a.o.Coordinator.ValidateOffsetCommit(vr, func(res coordinator.OffsetCommitResult) {
		go a.offsetCommitValidated(req, out, r, res, up)
	})
}

func (a *Adapter) offsetCommitValidated(req *proxy.Request, out proxy.Outcome, r *kmsg.OffsetCommitRequest, res coordinator.OffsetCommitResult, up int16) {
	if errors.Is(res.Err, kerr.GroupIDNotFound) {
		// Deleted meanwhile: the upstream answers as for any group.
		forwardAt(req, out, up)
		return
	}
	if res.Err != nil {
		out.Respond(offsetCommitAll(r, res.Err))
		return
	}
	// Split: refused partitions are answered here, the rest go upstream.
	refused := kmsg.NewPtrOffsetCommitResponse()
	fwd := *r
	fwd.Topics = nil
	i := 0
	for _, t := range r.Topics {
		keep := t
		keep.Partitions = nil
		var rt *kmsg.OffsetCommitResponseTopic
		for _, p := range t.Partitions {
			if err := res.Partitions[i]; err != nil {
				if rt == nil {
					refused.Topics = append(refused.Topics, kmsg.OffsetCommitResponseTopic{Topic: t.Topic})
					rt = &refused.Topics[len(refused.Topics)-1]
				}
				code := kafkaCode(err)
				rt.Partitions = append(rt.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: code})
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
		a.o.Log.Warn().Str("group", r.Group).Err(err).Msg("offset commit: no anchor member upstream yet")
		out.Respond(offsetCommitAll(r, kerr.CoordinatorNotAvailable))
		return
	}
	fwd.Generation = gen.Generation
	fwd.MemberID = gen.MemberID
	fwd.InstanceID = &gen.InstanceID
	out.ForwardRewritten(&fwd, min(req.Version, up), func(resp kmsg.Response) kmsg.Response {
		cr := resp.(*kmsg.OffsetCommitResponse)
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

// anchorFenced reports whether an upstream error means the anchor's
// membership is no longer current: the client gets a retriable error
// (COORDINATOR_NOT_AVAILABLE: it looks the coordinator up and retries)
// while the anchor rejoins, never a fatal one.
func anchorFenced(code int16) bool {
	switch code {
	case kerr.IllegalGeneration.Code, kerr.UnknownMemberID.Code, kerr.FencedInstanceID.Code, kerr.RebalanceInProgress.Code:
		return true
	}
	return false
}

func (a *Adapter) anchorFenced(group string, gen anchor.Generation) {
	a.o.Log.Warn().Str("group", group).Int32("generation", gen.Generation).Msg("upstream refused the anchor's generation; anchor rejoins")
	a.o.Anchors.Fenced(group, gen)
}

// offsetCommitAll answers every partition with err.
func offsetCommitAll(r *kmsg.OffsetCommitRequest, err error) *kmsg.OffsetCommitResponse {
	code := kafkaCode(err)
	resp := kmsg.NewPtrOffsetCommitResponse()
	for _, t := range r.Topics {
		rt := kmsg.OffsetCommitResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: code})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// forwardAt forwards a request untouched, or re-encoded at the upstream's
// newest version when the client used a newer one (the adapter advertises
// offset versions the upstream may lack).
func forwardAt(req *proxy.Request, out proxy.Outcome, up int16) {
	if req.Version <= up {
		out.Forward()
		return
	}
	if fr, ok := req.Body.(*kmsg.OffsetFetchRequest); ok {
		down, err := offsetFetchDown(fr, up)
		if err != nil {
			out.Respond(offsetFetchAll(fr, err))
			return
		}
		out.ForwardRewritten(down, up, func(resp kmsg.Response) kmsg.Response { return offsetFetchUp(resp.(*kmsg.OffsetFetchResponse), fr, up) })
		return
	}
	out.ForwardRewritten(req.Body, up, nil)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
