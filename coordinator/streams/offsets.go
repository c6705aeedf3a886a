package streams

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// CommitPartition is one partition of an OffsetCommit or TxnOffsetCommit.
type CommitPartition struct {
	Topic     string
	Partition int32
}

// OffsetCommitRequest is what the streams group checks of an OffsetCommit
// (Kafka's StreamsGroup.validateOffsetCommit).
type OffsetCommitRequest struct {
	GroupID       string
	MemberID      string
	InstanceID    string // "" if none
	MemberEpoch   int32  // GenerationIdOrMemberEpoch
	Transactional bool   // TxnOffsetCommit
	Version       int16  // the OffsetCommit request version
	Partitions    []CommitPartition
}

// OffsetCommitResult is the verdict: Err for the whole request, else one
// error (nil or STALE_MEMBER_EPOCH) per partition, in request order.
type OffsetCommitResult struct {
	Err        error
	Partitions []error
}

func ValidateOffsetCommit(g *Group, req OffsetCommitRequest) OffsetCommitResult {
	ok := OffsetCommitResult{Partitions: make([]error, len(req.Partitions))}
	if g == nil {
		return OffsetCommitResult{Err: kerr.GroupIDNotFound}
	}
	// The admin client (or a consumer without group management) may commit
	// to an empty group.
	if req.MemberEpoch < 0 && len(g.Members) == 0 {
		return ok
	}
	// TxnOffsetCommit need not name the member.
	if req.Transactional && req.MemberEpoch == -1 && req.MemberID == "" && req.InstanceID == "" {
		return ok
	}
	m := g.Members[req.MemberID]
	if m == nil {
		return OffsetCommitResult{Err: fmt.Errorf("member %s is not a member of group %s: %w", req.MemberID, g.ID, kerr.UnknownMemberID)}
	}
	if !req.Transactional && req.Version < 9 {
		return OffsetCommitResult{Err: fmt.Errorf("OffsetCommit version 9 or above must be used by members using the streams group protocol: %w", kerr.UnsupportedVersion)}
	}
	cur := m.CurrentAssignment()
	switch {
	case req.MemberEpoch == cur.MemberEpoch:
		return ok
	case req.MemberEpoch > cur.MemberEpoch:
		return OffsetCommitResult{Err: fmt.Errorf("received member epoch %d is newer than current member epoch %d: %w", req.MemberEpoch, cur.MemberEpoch, kerr.StaleMemberEpoch)}
	}
	// An older epoch: each partition's task must still be the member's
	// (assigned or being revoked), granted at or before that epoch.
	if g.Topology == nil {
		return OffsetCommitResult{Err: fmt.Errorf("topology is not available for offset commit validation: %w", kerr.StaleMemberEpoch)}
	}
	sources := SourceSubtopologies(g)
	for i, p := range req.Partitions {
		sub, known := sources[p.Topic]
		if !known {
			ok.Partitions[i] = fmt.Errorf("topic %s is not in the topology: %w", p.Topic, kerr.StaleMemberEpoch)
			continue
		}
		t := TaskID{Subtopology: sub, Partition: p.Partition}
		epoch, held := cur.ActiveEpochs[t]
		if !held || !(TasksContains(cur.Assigned.Active, sub, p.Partition) || TasksContains(cur.PendingRevocation.Active, sub, p.Partition)) {
			ok.Partitions[i] = fmt.Errorf("task %s-%d is not assigned or pending revocation for member: %w", sub, p.Partition, kerr.StaleMemberEpoch)
			continue
		}
		if req.MemberEpoch < epoch {
			ok.Partitions[i] = fmt.Errorf("received member epoch %d is older than assignment epoch %d for task %s-%d: %w", req.MemberEpoch, epoch, sub, p.Partition, kerr.StaleMemberEpoch)
		}
	}
	return ok
}

// SourceSubtopologies maps each source and repartition-source topic to its
// subtopology (Kafka's StreamsTopology.sourceTopicMap).
func SourceSubtopologies(g *Group) map[string]string {
	out := map[string]string{}
	for _, s := range g.Topology.Subtopologies {
		for _, t := range s.SourceTopics {
			out[t] = s.ID
		}
		for _, t := range s.RepartitionSourceTopics {
			out[t.Name] = s.ID
		}
	}
	return out
}
