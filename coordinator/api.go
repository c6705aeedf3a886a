package coordinator

import "github.com/streamshift/streamshift/coordinator/streams"

// The requests, results, errors and records of the coordinator's entry
// points are the state machine's (package streams): these names keep them
// where the callers of the entry points (route, migration, translate,
// upstream, config, cmd) find them.

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

	Config        = streams.Config
	HandBackState = streams.HandBackState

	// Record and its values are what a Log stores.
	Record = streams.Record

	// TopicMetadata, MetadataImage and CreatableTopic are what a
	// MetadataSource and a TopicCreator deal in.
	TopicMetadata  = streams.TopicMetadata
	MetadataImage  = streams.MetadataImage
	CreatableTopic = streams.CreatableTopic
)

const (
	GroupEmpty = streams.GroupEmpty

	// The classic protocol of a streams group's classic members.
	ClassicProtocolType = streams.ClassicProtocolType
	ClassicProtocolName = streams.ClassicProtocolName
)

var (
	// ErrClassicNotServed is streams.ErrClassicNotServed.
	ErrClassicNotServed = streams.ErrClassicNotServed
	// ErrHandBackHeld is streams.ErrHandBackHeld.
	ErrHandBackHeld = streams.ErrHandBackHeld
	// ErrUnknownRecordType is streams.ErrUnknownRecordType.
	ErrUnknownRecordType = streams.ErrUnknownRecordType
)

// DefaultConfig is streams.DefaultConfig: Kafka's defaults.
func DefaultConfig() Config { return streams.DefaultConfig() }

// ParseConfig is streams.ParseConfig.
func ParseConfig(values map[string]string) (Config, error) { return streams.ParseConfig(values) }

// DefaultGroupConfigName is streams.DefaultGroupConfigName.
func DefaultGroupConfigName(name string) string { return streams.DefaultGroupConfigName(name) }

// IsStreamsGroupConfig is streams.IsStreamsGroupConfig.
func IsStreamsGroupConfig(name string) bool { return streams.IsStreamsGroupConfig(name) }

// MarshalRecord is streams.MarshalRecord: a record in the durable format.
func MarshalRecord(r Record) (key, value []byte, err error) { return streams.MarshalRecord(r) }

// UnmarshalRecord is streams.UnmarshalRecord.
func UnmarshalRecord(key, value []byte) (Record, error) { return streams.UnmarshalRecord(key, value) }

// Replay is streams.Replay: the groups records give.
func Replay(gs streams.Groups, records []Record) (streams.Groups, error) {
	return streams.Replay(gs, records)
}
