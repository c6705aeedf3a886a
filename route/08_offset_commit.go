package route

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
	vr := coordinator.OffsetCommitRequest{
		GroupID: r.Group, MemberID: r.MemberID, InstanceID: deref(r.InstanceID),
		MemberEpoch: r.Generation, Version: req.Version,
		Partitions: commitPartitions(r.Topics, func(t kmsg.OffsetCommitRequestTopic, add func(string, int32)) {
			for _, p := range t.Partitions {
				add(t.Topic, p.Partition)
			}
		}),
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
	sizes := make([]int, len(r.Topics))
	for ti, t := range r.Topics {
		sizes[ti] = len(t.Partitions)
	}
	a.forwardAsAnchor(req, out, up, anchoredCommit{
		group:  r.Group,
		what:   "offset commit",
		code:   kafkaCode,
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
	}, byTopic(res.Partitions, sizes))
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
	c := kafkaCode(err)
	return offsetCommitAnswer(r, func(int, int) (int16, bool) { return c, true })
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
