package route

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/upstream/anchor"
)

// anchoredCommit is what OffsetCommit and TxnOffsetCommit differ in: how
// their kmsg types are read and built. The flow itself is commit (ownership,
// gate, validation) and forwardAsAnchor (refused partitions answered here,
// the rest forwarded under the anchor member's identity, anchor fencing
// turned into a retriable error).
type anchoredCommit struct {
	group string
	what  string // for logs: "offset commit", "transactional offset commit"
	// validation is the streams group's view of the commit, built only for
	// an owned group.
	validation func() streams.OffsetCommitRequest
	// heldAlive: a commit held by a takeover's gate shows its member's
	// session alive (Migration.heldAlive).
	heldAlive bool
	// sizes is the number of partitions of each topic of the request.
	sizes []int
	// answer builds the response for the partitions code selects (ti, pi:
	// topic and partition index in the client's request).
	answer func(code func(ti, pi int) (int16, bool)) kmsg.Response
	// forward is the client's request with only the kept partitions,
	// under the anchor member's identity.
	forward func(keep [][]bool, gen anchor.Generation) kmsg.Request
	// codes visits every partition error code of the upstream's response.
	codes func(resp kmsg.Response, visit func(*int16))
	// merge appends the locally refused partitions to the upstream's response.
	merge func(resp, refused kmsg.Response) kmsg.Response
	// code maps a validation error to the error code of the client's version.
	code func(error) int16
	// memberless: without an anchor member upstream the commit is
	// forwarded as memberNone's instead of waiting for one.
	memberless bool
}

// memberNone is the identity of a commit forwarded without a member:
// member id "", generation -1, no instance id. Kafka's group coordinator
// (ClassicGroup.validateOffsetCommit, 3.x's GroupCoordinator alike) accepts
// it for a transactional commit in every state but Dead, as it does the
// commits of producers before KIP-447. Zombies stay fenced: what reaches
// the broker passed streamshift's validation of the member's own
// generation (ValidateClassicOffsetCommit / ValidateOffsetCommit), which is
// what fences a zombie here whether the anchor's generation is carried or
// not (the broker checks the anchor's, which says nothing of the member),
// and the producer's epoch is checked by the transaction coordinator as
// ever.
var memberNone = anchor.Generation{Generation: -1}

// commit is the one entry of OffsetCommit and TxnOffsetCommit: a commit to
// a group the proxy does not serve goes upstream untouched (down-converted
// if the upstream is older). A commit to an owned group is validated as
// Kafka 4.4's streams group does, then rewritten to the anchor's member id
// and generation and forwarded on the client's own upstream connection;
// partitions the validation refused are answered locally and merged into
// the upstream's response.
//
// With the migration on, the commit passes the gate first (a takeover holds
// a group's commits with its other requests), what goes upstream is counted
// in flight, and the validation is ValidateClassicOffsetCommit, which takes
// a classic member's generation as its member epoch and checks a
// streams-protocol member as ValidateOffsetCommit does.
func (rs *Routes) commit(req *proxy.Request, out proxy.Outcome, c anchoredCommit) {
	var held func()
	if c.heldAlive && rs.mig != nil {
		held = func() { rs.mig.mig.Observer().ObserveHeld(c.group, req.Body) }
	}
	rs.gated(req, out, c.group, held, func(out proxy.Outcome) {
		up := rs.upstreamMax(req.Key)
		// Whether the group is served here is settled by the validation
		// itself (GROUP_ID_NOT_FOUND: forwarded), in one crossing of the
		// group's queue; a group without a queue here is not asked.
		if !rs.o.Ownership.MayOwn(c.group) {
			forwardAt(req, out, up)
			return
		}
		validate := rs.o.Coordinator.ValidateOffsetCommit
		if rs.mig != nil {
			validate = rs.o.Coordinator.ValidateClassicOffsetCommit
		}
		validate(c.validation(), func(res streams.OffsetCommitResult) {
			go rs.commitValidated(req, out, up, c, res)
		})
	})
}

// commitValidated finishes a commit the streams group validated.
func (rs *Routes) commitValidated(req *proxy.Request, out proxy.Outcome, up int16, c anchoredCommit, res streams.OffsetCommitResult) {
	if errors.Is(res.Err, kerr.GroupIDNotFound) {
		// Not served here (or deleted meanwhile): the upstream answers
		// as for any group.
		forwardAt(req, out, up)
		return
	}
	// A client that may not READ the group gets the broker's refusal,
	// whatever our validation found (authorize.go). Without an
	// answer the commit goes on: what is forwarded is checked by the
	// broker for the client's principal anyway.
	if denied, _ := rs.groupReadDenied(req, c.group); denied {
		forwardAt(req, out, up)
		return
	}
	if res.Err != nil {
		out.Respond(c.answerAll(res.Err))
		return
	}
	rs.forwardAsAnchor(req, out, up, c, byTopic(res.Partitions, c.sizes))
}

// answerAll answers every partition with err.
func (c anchoredCommit) answerAll(err error) kmsg.Response {
	code := c.code(err)
	return c.answer(func(int, int) (int16, bool) { return code, true })
}

// forwardAsAnchor finishes a commit the streams group validated: errs holds
// one error per partition in request order, grouped by topic.
func (rs *Routes) forwardAsAnchor(req *proxy.Request, out proxy.Outcome, up int16, c anchoredCommit, errs [][]error) {
	keep := make([][]bool, len(errs))
	anyKept := false
	for ti, pe := range errs {
		keep[ti] = make([]bool, len(pe))
		for pi, err := range pe {
			keep[ti][pi] = err == nil
			anyKept = anyKept || err == nil
		}
	}
	refused := c.answer(func(ti, pi int) (int16, bool) {
		if keep[ti][pi] {
			return 0, false
		}
		return c.code(errs[ti][pi]), true
	})
	if !anyKept {
		out.Respond(refused)
		return
	}
	rs.ensureAnchor(c.group, nil)
	gen, ok := rs.o.Anchors.Current(c.group)
	switch {
	case ok:
	case c.memberless:
		// No anchor member upstream yet (a takeover's anchor still
		// joining, an anchor rejoining): a transactional commit goes
		// without a member (memberNone) rather than waiting for it.
		gen = memberNone
	default:
		ctx, cancel := requestContext(req, rs.o.AnchorWait)
		var err error
		gen, err = rs.o.Anchors.Generation(ctx, c.group)
		cancel()
		if err != nil {
			rs.o.Log.Warn().Str("group", c.group).Err(err).Msgf("%s: no anchor member upstream yet", c.what)
			out.Respond(c.answerAll(kerr.CoordinatorNotAvailable))
			return
		}
	}
	out.ForwardRewritten(c.forward(keep, gen), min(req.Version, up), func(resp kmsg.Response) kmsg.Response {
		fenced := false
		c.codes(resp, func(code *int16) {
			if anchorFenced(*code) {
				*code = kerr.CoordinatorNotAvailable.Code
				fenced = true
			}
		})
		if fenced {
			rs.anchorFenced(c.group, gen)
		}
		return c.merge(resp, refused)
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

func (rs *Routes) anchorFenced(group string, gen anchor.Generation) {
	rs.o.Log.Warn().Str("group", group).Int32("generation", gen.Generation).Msg("upstream refused the anchor's generation; anchor rejoins")
	rs.o.Anchors.Fenced(group, gen)
}

// commitPartitions lists a commit's partitions in request order, as the
// streams group validates them.
func commitPartitions[T any](topics []T, each func(T, func(topic string, partition int32))) []streams.CommitPartition {
	var parts []streams.CommitPartition
	for _, t := range topics {
		each(t, func(topic string, partition int32) {
			parts = append(parts, streams.CommitPartition{Topic: topic, Partition: partition})
		})
	}
	return parts
}

// byTopic regroups the validation's flat per-partition errors by topic.
func byTopic(flat []error, sizes []int) [][]error {
	out := make([][]error, len(sizes))
	i := 0
	for ti, n := range sizes {
		out[ti] = flat[i : i+n]
		i += n
	}
	return out
}

// keepPartitions copies topics with only the partitions keep marks; topics
// left without partitions are dropped.
func keepPartitions[T, P any](topics []T, partitions func(*T) *[]P, keep [][]bool) []T {
	var out []T
	for ti := range topics {
		t := topics[ti]
		var kept []P
		for pi, p := range *partitions(&t) {
			if keep[ti][pi] {
				kept = append(kept, p)
			}
		}
		if len(kept) > 0 {
			*partitions(&t) = kept
			out = append(out, t)
		}
	}
	return out
}
