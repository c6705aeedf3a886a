package coordinator

import "github.com/streamshift/streamshift/coordinator/streams"

// The requests, results and errors of the coordinator's entry points are
// the state machine's (package streams): these names keep them where the
// callers of the entry points (route, migration, translate, upstream) find
// them.

type (
	// ClientInfo is streams.ClientInfo: the connection a request came on.
	ClientInfo = streams.ClientInfo

	ClassicJoinRequest      = streams.ClassicJoinRequest
	ClassicJoinResult       = streams.ClassicJoinResult
	ClassicSyncRequest      = streams.ClassicSyncRequest
	ClassicSyncResult       = streams.ClassicSyncResult
	ClassicHeartbeatRequest = streams.ClassicHeartbeatRequest
	ClassicLeaveMember      = streams.ClassicLeaveMember
	ClassicGroupState       = streams.ClassicGroupState
	ClassicMemberState      = streams.ClassicMemberState

	OffsetCommitRequest = streams.OffsetCommitRequest
	OffsetCommitResult  = streams.OffsetCommitResult
	CommitPartition     = streams.CommitPartition

	GroupConfigAlteration = streams.GroupConfigAlteration

	// TopicMetadata, MetadataImage and CreatableTopic are what a
	// MetadataSource and a TopicCreator deal in.
	TopicMetadata  = streams.TopicMetadata
	MetadataImage  = streams.MetadataImage
	CreatableTopic = streams.CreatableTopic
)

// The classic protocol of a streams group's classic members.
const (
	ClassicProtocolType = streams.ClassicProtocolType
	ClassicProtocolName = streams.ClassicProtocolName
)

var (
	// ErrClassicNotServed is streams.ErrClassicNotServed.
	ErrClassicNotServed = streams.ErrClassicNotServed
	// ErrHandBackHeld is streams.ErrHandBackHeld.
	ErrHandBackHeld = streams.ErrHandBackHeld
)
