package translate

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
)

// ValidateOffsetCommit checks a classic member's OffsetCommit against the
// streams group (generation = member epoch) and calls done with nil or an
// error wrapping the Kafka error to answer (UNKNOWN_MEMBER_ID,
// ILLEGAL_GENERATION, FENCED_INSTANCE_ID; never REBALANCE_IN_PROGRESS), or
// coordinator.ErrClassicNotServed / GROUP_ID_NOT_FOUND for a group not held
// here. Forwarding the accepted commit (with the anchor's identity) is the
// caller's.
func (t *Translator) ValidateOffsetCommit(req *kmsg.OffsetCommitRequest, done func(error)) {
	r := coordinator.OffsetCommitRequest{GroupID: req.Group, MemberID: req.MemberID, MemberEpoch: req.Generation, Version: req.Version}
	if req.InstanceID != nil {
		r.InstanceID = *req.InstanceID
	}
	t.c.ValidateClassicOffsetCommit(r, func(res coordinator.OffsetCommitResult) { done(res.Err) })
}

// ValidateTxnOffsetCommit is ValidateOffsetCommit for TxnOffsetCommit (EOS).
func (t *Translator) ValidateTxnOffsetCommit(req *kmsg.TxnOffsetCommitRequest, done func(error)) {
	r := coordinator.OffsetCommitRequest{GroupID: req.Group, MemberID: req.MemberID, MemberEpoch: req.Generation, Transactional: true, Version: req.Version}
	if req.InstanceID != nil {
		r.InstanceID = *req.InstanceID
	}
	t.c.ValidateClassicOffsetCommit(r, func(res coordinator.OffsetCommitResult) { done(res.Err) })
}
