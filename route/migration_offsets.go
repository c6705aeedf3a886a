package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/proxy"
)

// The offset APIs with the migration on: they pass the gate (a takeover
// holds a group's commits and fetches with its other requests), what goes
// upstream is counted in flight, and a commit to a served group is checked
// by ValidateClassicOffsetCommit, which takes a classic member's generation
// as its member epoch and checks a streams-protocol member as
// ValidateOffsetCommit does. The rest is the adapter's own path.

func (m *Migration) offsetCommit(req *proxy.Request, out proxy.Outcome) {
	r := req.Body.(*kmsg.OffsetCommitRequest)
	m.gate.enter(r.Group, func(answered func()) {
		out := m.counted(req, out, answered)
		if !m.a.o.Ownership.Owns(r.Group) {
			m.a.offsetCommit(req, out)
			return
		}
		up := m.a.upstreamMax(req.Key)
		vr := coordinator.OffsetCommitRequest{
			GroupID: r.Group, MemberID: r.MemberID, InstanceID: deref(r.InstanceID),
			MemberEpoch: r.Generation, Version: req.Version,
		}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				vr.Partitions = append(vr.Partitions, coordinator.CommitPartition{Topic: t.Topic, Partition: p.Partition})
			}
		}
		m.a.o.Coordinator.ValidateClassicOffsetCommit(vr, func(res coordinator.OffsetCommitResult) {
			go m.a.offsetCommitValidated(req, out, r, res, up)
		})
	}, func() { m.heldAlive(r.Group, r) })
}

func (m *Migration) txnOffsetCommit(req *proxy.Request, out proxy.Outcome) {
	r := req.Body.(*kmsg.TxnOffsetCommitRequest)
	m.gate.enter(r.Group, func(answered func()) {
		out := m.counted(req, out, answered)
		if !m.a.o.Ownership.Owns(r.Group) {
			m.a.txnOffsetCommit(req, out)
			return
		}
		up := m.a.upstreamMax(req.Key)
		vr := coordinator.OffsetCommitRequest{
			GroupID: r.Group, MemberID: r.MemberID, InstanceID: deref(r.InstanceID),
			MemberEpoch: r.Generation, Transactional: true, Version: req.Version,
		}
		if req.Version < 3 {
			// No member fields before v3: Kafka checks nothing either.
			vr.MemberEpoch, vr.MemberID, vr.InstanceID = -1, "", ""
		}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				vr.Partitions = append(vr.Partitions, coordinator.CommitPartition{Topic: t.Topic, Partition: p.Partition})
			}
		}
		m.a.o.Coordinator.ValidateClassicOffsetCommit(vr, func(res coordinator.OffsetCommitResult) {
			go m.a.txnOffsetCommitValidated(req, out, r, res, up)
		})
	}, nil)
}

func (m *Migration) offsetFetch(req *proxy.Request, out proxy.Outcome) {
	group := classicGroup(req.Body)
	m.gate.enter(group, func(answered func()) { m.a.offsetFetch(req, m.counted(req, out, answered)) }, nil)
}
