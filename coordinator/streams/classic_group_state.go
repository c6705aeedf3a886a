package streams

import (
	"time"

	"github.com/streamshift/streamshift/classicstreams"
)

// What a takeover reads of a live classic group (classic_takeover.go
// imports it; classic_double_active.go mends it first).

// ClassicGroupState is a live classic Kafka Streams group as read at the
// upstream coordinator when it is taken over (DescribeGroups plus what the
// proxy saw pass through): its generation and, for every member, its last
// JoinGroup subscription and its last SyncGroup assignment.
type ClassicGroupState struct {
	GroupID    string
	Generation int32
	Members    []ClassicMemberState
}

// ClassicMemberState is one member of a classic group being taken over.
type ClassicMemberState struct {
	MemberID, InstanceID string
	Client               ClientInfo
	// SessionTimeoutMs and RebalanceTimeoutMs come from the member's
	// JoinGroup as it passed through; DescribeGroups does not report them.
	SessionTimeoutMs, RebalanceTimeoutMs int32
	// LastHeartbeat is when the upstream last renewed the member's session
	// (a Heartbeat, JoinGroup, SyncGroup or OffsetCommit it accepted), on
	// the coordinator's clock; zero if unknown. The member's session here
	// runs on from it, so a member that stopped just before the takeover
	// is fenced when the broker would have fenced it, not a whole session
	// later.
	LastHeartbeat time.Time
	// Subscription is the member's JoinGroup of this generation: its
	// OwnedPartitions are what it held when it joined.
	Subscription *classicstreams.ConsumerSubscription
	Info         *classicstreams.SubscriptionInfo
	// Assignment and AssignmentInfo: the member's assignment of this
	// generation (the leader's SyncGroup). It holds it once it has
	// revoked what it owned outside it (pendingRevocation).
	Assignment     *classicstreams.ConsumerAssignment
	AssignmentInfo *classicstreams.AssignmentInfo
}
