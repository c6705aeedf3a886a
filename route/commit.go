package route

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/anchor"
	"github.com/streamshift/streamshift/proxy"
)

// anchoredCommit is what OffsetCommit and TxnOffsetCommit differ in once the
// streams group has validated them: how their kmsg types are read and built.
// The flow itself (refused partitions answered here, the rest forwarded
// under the anchor member's identity, anchor fencing turned into a retriable
// error) is forwardAsAnchor.
type anchoredCommit struct {
	group string
	what  string // for logs: "offset commit", "transactional offset commit"
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
}

// forwardAsAnchor finishes a commit the streams group validated: errs holds
// one error per partition in request order, grouped by topic.
func (a *Adapter) forwardAsAnchor(req *proxy.Request, out proxy.Outcome, up int16, c anchoredCommit, errs [][]error) {
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
	a.ensureAnchor(c.group, nil)
	ctx, cancel := requestContext(req, a.o.AnchorWait)
	gen, err := a.o.Anchors.Generation(ctx, c.group)
	cancel()
	if err != nil {
		a.o.Log.Warn().Str("group", c.group).Err(err).Msgf("%s: no anchor member upstream yet", c.what)
		out.Respond(c.answer(func(int, int) (int16, bool) { return c.code(kerr.CoordinatorNotAvailable), true }))
		return
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
			a.anchorFenced(c.group, gen)
		}
		return c.merge(resp, refused)
	})
}

// commitPartitions lists a commit's partitions in request order, as the
// streams group validates them.
func commitPartitions[T any](topics []T, each func(T, func(topic string, partition int32))) []coordinator.CommitPartition {
	var parts []coordinator.CommitPartition
	for _, t := range topics {
		each(t, func(topic string, partition int32) {
			parts = append(parts, coordinator.CommitPartition{Topic: topic, Partition: partition})
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
