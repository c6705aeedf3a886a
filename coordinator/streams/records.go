package streams

import (
	"fmt"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// RecordType is the key version of a streams-group record in Kafka's
// __consumer_offsets (the record type). Type 18 (partition metadata) was
// replaced by the metadata hash of StreamsGroupMetadata and does not exist.
type RecordType int16

const (
	RecordGroupMetadata            RecordType = 17 // StreamsGroupMetadata
	RecordMemberMetadata           RecordType = 19 // StreamsGroupMemberMetadata
	RecordTargetAssignmentMetadata RecordType = 20 // StreamsGroupTargetAssignmentMetadata
	RecordTargetAssignmentMember   RecordType = 21 // StreamsGroupTargetAssignmentMember
	RecordCurrentMemberAssignment  RecordType = 22 // StreamsGroupCurrentMemberAssignment
	RecordTopology                 RecordType = 23 // StreamsGroupTopology

	// RecordOwnership is streamshift's own (no Kafka counterpart): the proxy
	// serves this group (coordinator/ownership.go).
	RecordOwnership RecordType = 1000
	// RecordGroupConfig is streamshift's own too: the group's dynamic
	// configs (kafka-configs --entity-type groups), which Kafka keeps in its
	// metadata log, not in __consumer_offsets (group_config_record.go).
	RecordGroupConfig RecordType = 1001
)

func (t RecordType) String() string {
	switch t {
	case RecordGroupMetadata:
		return "StreamsGroupMetadata"
	case RecordMemberMetadata:
		return "StreamsGroupMemberMetadata"
	case RecordTargetAssignmentMetadata:
		return "StreamsGroupTargetAssignmentMetadata"
	case RecordTargetAssignmentMember:
		return "StreamsGroupTargetAssignmentMember"
	case RecordCurrentMemberAssignment:
		return "StreamsGroupCurrentMemberAssignment"
	case RecordTopology:
		return "StreamsGroupTopology"
	case RecordOwnership:
		return "StreamshiftOwnership"
	case RecordGroupConfig:
		return "StreamshiftGroupConfig"
	}
	return fmt.Sprintf("RecordType(%d)", int16(t))
}

// Record is one streams-group record: a key (type, group, member) and a value.
// A nil Value is a tombstone. Values are immutable once emitted: the log and the
// group state share them. These are in-memory types: a durable log stores
// the durable values of record_values.go, so renaming a field here changes
// no stored byte.
type Record struct {
	Type     RecordType
	GroupID  string
	MemberID string // for member-keyed types (19, 21, 22)
	Value    any    // one of the *...Value types below, or nil
}

// Tombstone reports whether the record deletes its key.
func (r Record) Tombstone() bool { return r.Value == nil }

// key identifies what a record overwrites, for log compaction.
type RecordKey struct {
	Type     RecordType
	GroupID  string
	MemberID string
}

func (r Record) Key() RecordKey { return RecordKey{r.Type, r.GroupID, r.MemberID} }

func (r Record) String() string {
	if r.MemberID != "" {
		return fmt.Sprintf("%s{%s,%s}=%+v", r.Type, r.GroupID, r.MemberID, r.Value)
	}
	return fmt.Sprintf("%s{%s}=%+v", r.Type, r.GroupID, r.Value)
}

// OwnershipValue is RecordOwnership: why the proxy serves the group.
type OwnershipValue struct {
	// Source is how the group became the proxy's (OwnershipNew, ...).
	Source string
	// UpstreamState is the upstream classic group's state at that moment
	// ("Dead" when unknown, "Empty", ...).
	UpstreamState string
	// ClaimedAtMs is when (unix ms).
	ClaimedAtMs int64
}

// Ownership sources (OwnershipValue.Source).
const (
	// OwnershipNew: the upstream did not know the group.
	OwnershipNew = "new"
	// OwnershipOfflineMigration: an Empty classic group upstream; its
	// committed offsets carry over.
	OwnershipOfflineMigration = "offline-migration"
	// OwnershipAnchored: the upstream group holds only streamshift anchors
	// (a proxy restarted without its state).
	OwnershipAnchored = "anchored"
	// OwnershipTakeover: a live classic group moved in (Takeover).
	OwnershipTakeover = "takeover"
)

// KeyValue is a string pair (client tags, assignment configs).
type KeyValue struct {
	Key, Value string
}

// Endpoint is a member's user endpoint for interactive queries.
type Endpoint struct {
	Host string
	Port uint16
}

// GroupMetadataValue is StreamsGroupMetadata (17).
type GroupMetadataValue struct {
	Epoch                  int32
	MetadataHash           uint64
	ValidatedTopologyEpoch int32 // -1 when the topology is not configured
	LastAssignmentConfigs  []KeyValue
}

// MemberMetadataValue is StreamsGroupMemberMetadata (19).
type MemberMetadataValue struct {
	InstanceID         string // "" when not static
	RackID             string // "" when none
	ClientID           string
	ClientHost         string
	RebalanceTimeoutMs int32
	TopologyEpoch      int32
	ProcessID          string
	UserEndpoint       *Endpoint
	ClientTags         []KeyValue
	// Classic is set for a member that speaks the classic protocol
	// (JoinGroup/SyncGroup/Heartbeat) inside the streams group; nil for a
	// streams-protocol member.
	Classic *ClassicMemberMetadata
}

func (v *MemberMetadataValue) Equal(o *MemberMetadataValue) bool {
	if v == nil || o == nil {
		return v == o
	}
	if v.InstanceID != o.InstanceID || v.RackID != o.RackID || v.ClientID != o.ClientID ||
		v.ClientHost != o.ClientHost || v.RebalanceTimeoutMs != o.RebalanceTimeoutMs ||
		v.TopologyEpoch != o.TopologyEpoch || v.ProcessID != o.ProcessID {
		return false
	}
	if (v.UserEndpoint == nil) != (o.UserEndpoint == nil) || (v.UserEndpoint != nil && *v.UserEndpoint != *o.UserEndpoint) {
		return false
	}
	return keyValuesEqual(v.ClientTags, o.ClientTags)
}

func keyValuesEqual(a, b []KeyValue) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// MemberState is a member's reconciliation state (Kafka's MemberState).
type MemberState int8

const (
	MemberStable          MemberState = 1 // STABLE
	MemberUnrevokedTasks  MemberState = 2 // UNREVOKED_TASKS
	MemberUnreleasedTasks MemberState = 3 // UNRELEASED_TASKS
	MemberUnknown         MemberState = 127
)

// memberStateNames are Kafka's MemberState names.
var memberStateNames = map[MemberState]string{MemberStable: "STABLE", MemberUnrevokedTasks: "UNREVOKED_TASKS", MemberUnreleasedTasks: "UNRELEASED_TASKS"}

func (s MemberState) String() string {
	if n, ok := memberStateNames[s]; ok {
		return n
	}
	return "UNKNOWN"
}

// TargetAssignmentMetadataValue is StreamsGroupTargetAssignmentMetadata (20).
type TargetAssignmentMetadataValue struct {
	AssignmentEpoch     int32
	AssignmentTimestamp int64 // unix ms; 0 lets the next assignment run at once
}

// TargetAssignmentMemberValue is StreamsGroupTargetAssignmentMember (21).
type TargetAssignmentMemberValue struct {
	Tasks TaskSets
}

// CurrentMemberAssignmentValue is StreamsGroupCurrentMemberAssignment (22).
type CurrentMemberAssignmentValue struct {
	MemberEpoch         int32
	PreviousMemberEpoch int32
	State               MemberState
	Assigned            TaskSets
	// ActiveEpochs holds the assignment epoch of every active task, assigned
	// or pending revocation (the tagged AssignmentEpochs of 4.2+);
	// OffsetCommit validation uses them.
	ActiveEpochs      map[TaskID]int32
	PendingRevocation TaskSets
}

// TopologyValue is StreamsGroupTopology (23).
type TopologyValue struct {
	Topology topology.Topology
}

// GroupConfigValue is RecordGroupConfig: the streams.* configs a group
// overrides, as Kafka names and prints them ("streams.num.standby.replicas"
// = "1"), so the log reads like kafka-configs output and survives changes of
// streamshift's own types.
type GroupConfigValue struct {
	Configs []KeyValue
}

// ClassicMemberMetadata is what a streams group keeps of a member that speaks
// the classic protocol (a Kafka Streams client with group.protocol=classic):
// Kafka's ClassicMemberMetadata of KIP-848, plus the versions of the Streams
// metadata the member sends, because its SyncGroup assignment must be
// written at the member's own version.
type ClassicMemberMetadata struct {
	SessionTimeoutMs int32
	// ConsumerProtocolVersion is the version of the member's
	// ConsumerProtocolSubscription; the assignment echoes it.
	ConsumerProtocolVersion int16
	// SubscriptionVersion and LatestSupportedVersion are the used and the
	// latest supported version of the member's SubscriptionInfo.
	SubscriptionVersion    int32
	LatestSupportedVersion int32
}

func (c *ClassicMemberMetadata) equal(o *ClassicMemberMetadata) bool {
	if c == nil || o == nil {
		return c == o
	}
	return *c == *o
}

func classicChanged(old, v *MemberMetadataValue) bool {
	return !old.classic().equal(v.classic())
}

// userEndpoint and classic read a member's metadata that may not exist yet
// (a new member's old value is nil).
func (v *MemberMetadataValue) userEndpoint() *Endpoint {
	if v == nil {
		return nil
	}
	return v.UserEndpoint
}

func (v *MemberMetadataValue) classic() *ClassicMemberMetadata {
	if v == nil {
		return nil
	}
	return v.Classic
}
