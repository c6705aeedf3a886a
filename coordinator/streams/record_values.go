package streams

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// The durable values of the group log's records: what a record's value is
// on the log, apart from the in-memory types (records.go) so that a
// refactor of those never changes what is stored. Each record type has one
// value struct, named as Kafka names its record (StreamsGroupMetadataValue,
// ...), and a value version (recordValueFormats).
//
// Version 1 is frozen as the releases before this file wrote it: the JSON
// names are those of the in-memory fields of that time, which is why most
// are Go-cased. testdata/records/ holds its golden bytes, and
// record_golden_test.go fails when a writer's bytes move away from them.
//
// Rules for a change, so that every later release reads what an earlier one
// wrote and an earlier one reads a later one's records (a rollback):
//   - a new field gets a new JSON name, different from every other name in
//     more than case (encoding/json matches names case-insensitively), and
//     bumps the type's version; a reader of an older version ignores it and
//     a newer reader finds it absent in older records (its zero value, or
//     what the version says it meant);
//   - a field is never renamed, retyped or given another meaning, and the
//     key never changes: log compaction knows a record by its key bytes;
//     a change that needs any of that is a new record type, which older
//     readers skip (ErrUnknownRecordType);
//   - a new version adds golden files; the old ones stay as they are.
//
// A struct whose fields match an in-memory one's converts with a Go
// conversion: a field added to or renamed in the in-memory type then fails
// to compile here instead of changing what is stored.

// recordValueFormat is one record type's value format: the version this
// release writes, its writer and its reader.
type recordValueFormat struct {
	Version int16
	encode  func(value any) (durableValue, bool)
	decode  func(value []byte) (any, error)
}

// RecordValueFormats are the record types this release knows; a type that
// is not here is skipped on load.
var RecordValueFormats = map[RecordType]recordValueFormat{
	RecordGroupMetadata:            valueFormat(1, newStreamsGroupMetadataValue, (*streamsGroupMetadataValue).inMemory),
	RecordMemberMetadata:           valueFormat(1, newStreamsGroupMemberMetadataValue, (*streamsGroupMemberMetadataValue).inMemory),
	RecordTargetAssignmentMetadata: valueFormat(1, newStreamsGroupTargetAssignmentMetadataValue, (*streamsGroupTargetAssignmentMetadataValue).inMemory),
	RecordTargetAssignmentMember:   valueFormat(1, newStreamsGroupTargetAssignmentMemberValue, (*streamsGroupTargetAssignmentMemberValue).inMemory),
	RecordCurrentMemberAssignment:  valueFormat(1, newStreamsGroupCurrentMemberAssignmentValue, (*streamsGroupCurrentMemberAssignmentValue).inMemory),
	RecordTopology:                 valueFormat(1, newStreamsGroupTopologyValue, (*streamsGroupTopologyValue).inMemory),
	RecordOwnership:                valueFormat(1, newStreamshiftOwnershipValue, (*streamshiftOwnershipValue).inMemory),
	RecordGroupConfig:              valueFormat(1, newStreamshiftGroupConfigValue, (*streamshiftGroupConfigValue).inMemory),
}

// valueFormat is the format of the record type whose in-memory value is a
// *V and whose durable value a *D: the writer converts to D (a value of
// another type is no value of this record type), the reader decodes a D
// (unknown fields ignored: a newer streamshift may have added them) and
// converts it back.
func valueFormat[V, D any, PD interface {
	*D
	durableValue
}](version int16, durable func(*V) PD, inMemory func(PD) (*V, error)) recordValueFormat {
	return recordValueFormat{
		Version: version,
		encode: func(value any) (durableValue, bool) {
			v, ok := value.(*V)
			if !ok {
				return nil, false
			}
			return durable(v), true
		},
		decode: func(b []byte) (any, error) {
			d := PD(new(D))
			if err := unmarshalJSON(b, d); err != nil {
				return nil, err
			}
			v, err := inMemory(d)
			if err != nil {
				return nil, err
			}
			return v, nil
		},
	}
}

// durableValue is a value struct about to be written.
type durableValue interface{ setVersion(int16) }

// valueVersion is the version of a durable value. Version 1 is implicit
// (not written): the releases before versions wrote none, and theirs,
// which refuse a field they do not know, must read this release's records.
// A later version is written as "v".
type valueVersion struct {
	V int16 `json:"v,omitempty"`
}

func (v *valueVersion) setVersion(version int16) {
	v.V = 0
	if version > 1 {
		v.V = version
	}
}

// recordKeyV1 is the key of every record type: the type, the group, and
// for member-keyed types the member. Frozen at version 1 (see above).
type recordKeyV1 struct {
	V      int    `json:"v"`
	Type   int16  `json:"type"`
	Group  string `json:"group"`
	Member string `json:"member,omitempty"`
}

const recordKeyVersion = 1

// durableKeyValue is a string pair: Kafka's KeyValue of client tags and
// assignment configs, and its TopicConfig.
type durableKeyValue struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

// streamsGroupMetadataValue is StreamsGroupMetadataValue (17).
type streamsGroupMetadataValue struct {
	valueVersion
	Epoch                  int32             `json:"Epoch"`
	MetadataHash           uint64            `json:"MetadataHash"`
	ValidatedTopologyEpoch int32             `json:"ValidatedTopologyEpoch"`
	LastAssignmentConfigs  []durableKeyValue `json:"LastAssignmentConfigs"`
}

func newStreamsGroupMetadataValue(v *GroupMetadataValue) *streamsGroupMetadataValue {
	return &streamsGroupMetadataValue{
		Epoch: v.Epoch, MetadataHash: v.MetadataHash, ValidatedTopologyEpoch: v.ValidatedTopologyEpoch,
		LastAssignmentConfigs: durableKeyValues(v.LastAssignmentConfigs),
	}
}

func (d *streamsGroupMetadataValue) inMemory() (*GroupMetadataValue, error) {
	return &GroupMetadataValue{
		Epoch: d.Epoch, MetadataHash: d.MetadataHash, ValidatedTopologyEpoch: d.ValidatedTopologyEpoch,
		LastAssignmentConfigs: keyValues(d.LastAssignmentConfigs),
	}, nil
}

// durableEndpoint is Kafka's Endpoint (a member's user endpoint).
type durableEndpoint struct {
	Host string `json:"Host"`
	Port uint16 `json:"Port"`
}

// durableClassicMemberMetadata is Kafka's ClassicMemberMetadata, plus the
// Streams metadata versions of the member (records.go, ClassicMemberMetadata).
type durableClassicMemberMetadata struct {
	SessionTimeoutMs        int32 `json:"SessionTimeoutMs"`
	ConsumerProtocolVersion int16 `json:"ConsumerProtocolVersion"`
	SubscriptionVersion     int32 `json:"SubscriptionVersion"`
	LatestSupportedVersion  int32 `json:"LatestSupportedVersion"`
}

// streamsGroupMemberMetadataValue is StreamsGroupMemberMetadataValue (19).
type streamsGroupMemberMetadataValue struct {
	valueVersion
	InstanceID         string                        `json:"InstanceID"`
	RackID             string                        `json:"RackID"`
	ClientID           string                        `json:"ClientID"`
	ClientHost         string                        `json:"ClientHost"`
	RebalanceTimeoutMs int32                         `json:"RebalanceTimeoutMs"`
	TopologyEpoch      int32                         `json:"TopologyEpoch"`
	ProcessID          string                        `json:"ProcessID"`
	UserEndpoint       *durableEndpoint              `json:"UserEndpoint"`
	ClientTags         []durableKeyValue             `json:"ClientTags"`
	Classic            *durableClassicMemberMetadata `json:"Classic,omitempty"`
}

func newStreamsGroupMemberMetadataValue(v *MemberMetadataValue) *streamsGroupMemberMetadataValue {
	return &streamsGroupMemberMetadataValue{
		InstanceID: v.InstanceID, RackID: v.RackID, ClientID: v.ClientID, ClientHost: v.ClientHost,
		RebalanceTimeoutMs: v.RebalanceTimeoutMs, TopologyEpoch: v.TopologyEpoch, ProcessID: v.ProcessID,
		UserEndpoint: convertPtr(v.UserEndpoint, func(e Endpoint) durableEndpoint { return durableEndpoint(e) }),
		ClientTags:   durableKeyValues(v.ClientTags),
		Classic: convertPtr(v.Classic, func(c ClassicMemberMetadata) durableClassicMemberMetadata {
			return durableClassicMemberMetadata(c)
		}),
	}
}

func (d *streamsGroupMemberMetadataValue) inMemory() (*MemberMetadataValue, error) {
	return &MemberMetadataValue{
		InstanceID: d.InstanceID, RackID: d.RackID, ClientID: d.ClientID, ClientHost: d.ClientHost,
		RebalanceTimeoutMs: d.RebalanceTimeoutMs, TopologyEpoch: d.TopologyEpoch, ProcessID: d.ProcessID,
		UserEndpoint: convertPtr(d.UserEndpoint, func(e durableEndpoint) Endpoint { return Endpoint(e) }),
		ClientTags:   keyValues(d.ClientTags),
		Classic: convertPtr(d.Classic, func(c durableClassicMemberMetadata) ClassicMemberMetadata {
			return ClassicMemberMetadata(c)
		}),
	}, nil
}

// streamsGroupTargetAssignmentMetadataValue is
// StreamsGroupTargetAssignmentMetadataValue (20).
type streamsGroupTargetAssignmentMetadataValue struct {
	valueVersion
	AssignmentEpoch     int32 `json:"AssignmentEpoch"`
	AssignmentTimestamp int64 `json:"AssignmentTimestamp"`
}

func newStreamsGroupTargetAssignmentMetadataValue(v *TargetAssignmentMetadataValue) *streamsGroupTargetAssignmentMetadataValue {
	return &streamsGroupTargetAssignmentMetadataValue{AssignmentEpoch: v.AssignmentEpoch, AssignmentTimestamp: v.AssignmentTimestamp}
}

func (d *streamsGroupTargetAssignmentMetadataValue) inMemory() (*TargetAssignmentMetadataValue, error) {
	return &TargetAssignmentMetadataValue{AssignmentEpoch: d.AssignmentEpoch, AssignmentTimestamp: d.AssignmentTimestamp}, nil
}

// durableTasks maps a subtopology id to its partitions (Kafka's TaskIds).
type durableTasks map[string][]int32

// durableTaskSets are the tasks of the three roles.
type durableTaskSets struct {
	Active  durableTasks `json:"Active"`
	Standby durableTasks `json:"Standby"`
	Warmup  durableTasks `json:"Warmup"`
}

func newDurableTaskSets(t TaskSets) durableTaskSets {
	return durableTaskSets{durableTasks(t.Active), durableTasks(t.Standby), durableTasks(t.Warmup)}
}

// inMemory brings the tasks to the canonical form (sorted, no duplicates,
// no empty entries), which the reconciliation relies on.
func (d durableTaskSets) inMemory() (TaskSets, error) {
	if err := d.check(); err != nil {
		return TaskSets{}, err
	}
	return TaskSets{NormalizeTasks(Tasks(d.Active)), NormalizeTasks(Tasks(d.Standby)), NormalizeTasks(Tasks(d.Warmup))}, nil
}

func (d durableTaskSets) check() error {
	for _, ts := range []durableTasks{d.Active, d.Standby, d.Warmup} {
		for _, ps := range ts {
			for _, p := range ps {
				if p < 0 {
					return fmt.Errorf("negative task partition %d", p)
				}
			}
		}
	}
	return nil
}

// streamsGroupTargetAssignmentMemberValue is
// StreamsGroupTargetAssignmentMemberValue (21).
type streamsGroupTargetAssignmentMemberValue struct {
	valueVersion
	Tasks durableTaskSets `json:"Tasks"`
}

func newStreamsGroupTargetAssignmentMemberValue(v *TargetAssignmentMemberValue) *streamsGroupTargetAssignmentMemberValue {
	return &streamsGroupTargetAssignmentMemberValue{Tasks: newDurableTaskSets(v.Tasks)}
}

func (d *streamsGroupTargetAssignmentMemberValue) inMemory() (*TargetAssignmentMemberValue, error) {
	t, err := d.Tasks.inMemory()
	if err != nil {
		return nil, err
	}
	return &TargetAssignmentMemberValue{Tasks: t}, nil
}

// durableTaskEpoch is the assignment epoch of one active task (Kafka's
// tagged AssignmentEpochs).
type durableTaskEpoch struct {
	Subtopology string `json:"s"`
	Partition   int32  `json:"p"`
	Epoch       int32  `json:"e"`
}

// streamsGroupCurrentMemberAssignmentValue is
// StreamsGroupCurrentMemberAssignmentValue (22). Its names were written by
// hand before the format was versioned, hence camel case.
type streamsGroupCurrentMemberAssignmentValue struct {
	valueVersion
	MemberEpoch         int32              `json:"memberEpoch"`
	PreviousMemberEpoch int32              `json:"previousMemberEpoch"`
	State               int8               `json:"state"`
	Assigned            durableTaskSets    `json:"assigned"`
	ActiveEpochs        []durableTaskEpoch `json:"activeEpochs,omitempty"`
	PendingRevocation   durableTaskSets    `json:"pendingRevocation"`
}

func newStreamsGroupCurrentMemberAssignmentValue(v *CurrentMemberAssignmentValue) *streamsGroupCurrentMemberAssignmentValue {
	d := &streamsGroupCurrentMemberAssignmentValue{
		MemberEpoch: v.MemberEpoch, PreviousMemberEpoch: v.PreviousMemberEpoch, State: int8(v.State),
		Assigned: newDurableTaskSets(v.Assigned), PendingRevocation: newDurableTaskSets(v.PendingRevocation),
	}
	for t, e := range v.ActiveEpochs {
		d.ActiveEpochs = append(d.ActiveEpochs, durableTaskEpoch{t.Subtopology, t.Partition, e})
	}
	// A map has no order: sorted, the same value is the same bytes.
	sort.Slice(d.ActiveEpochs, func(i, j int) bool {
		a, b := d.ActiveEpochs[i], d.ActiveEpochs[j]
		return a.Subtopology < b.Subtopology || (a.Subtopology == b.Subtopology && a.Partition < b.Partition)
	})
	return d
}

func (d *streamsGroupCurrentMemberAssignmentValue) inMemory() (*CurrentMemberAssignmentValue, error) {
	v := &CurrentMemberAssignmentValue{MemberEpoch: d.MemberEpoch, PreviousMemberEpoch: d.PreviousMemberEpoch, State: MemberState(d.State)}
	var err error
	if v.Assigned, err = d.Assigned.inMemory(); err != nil {
		return nil, err
	}
	if v.PendingRevocation, err = d.PendingRevocation.inMemory(); err != nil {
		return nil, err
	}
	if len(d.ActiveEpochs) > 0 {
		v.ActiveEpochs = make(map[TaskID]int32, len(d.ActiveEpochs))
		for _, e := range d.ActiveEpochs {
			v.ActiveEpochs[TaskID{e.Subtopology, e.Partition}] = e.Epoch
		}
	}
	return v, nil
}

// durableTopicInfo is Kafka's TopicInfo of StreamsGroupTopologyValue.
type durableTopicInfo struct {
	Name              string            `json:"Name"`
	Partitions        int32             `json:"Partitions"`
	ReplicationFactor int16             `json:"ReplicationFactor"`
	Configs           []durableKeyValue `json:"Configs"`
}

// durableCopartitionGroup is Kafka's CopartitionGroup.
type durableCopartitionGroup struct {
	SourceTopics            []int16 `json:"SourceTopics"`
	RepartitionSourceTopics []int16 `json:"RepartitionSourceTopics"`
}

// durableSubtopology is Kafka's Subtopology.
type durableSubtopology struct {
	ID                      string                    `json:"ID"`
	SourceTopics            []string                  `json:"SourceTopics"`
	SourceTopicRegex        []string                  `json:"SourceTopicRegex"`
	RepartitionSinkTopics   []string                  `json:"RepartitionSinkTopics"`
	RepartitionSourceTopics []durableTopicInfo        `json:"RepartitionSourceTopics"`
	StateChangelogTopics    []durableTopicInfo        `json:"StateChangelogTopics"`
	CopartitionGroups       []durableCopartitionGroup `json:"CopartitionGroups"`
}

// durableTopology is a topology at one epoch.
type durableTopology struct {
	Epoch         int32                `json:"Epoch"`
	Subtopologies []durableSubtopology `json:"Subtopologies"`
}

// streamsGroupTopologyValue is StreamsGroupTopologyValue (23); unlike
// Kafka's, the epoch sits in a nested object (the v1 layout).
type streamsGroupTopologyValue struct {
	valueVersion
	Topology durableTopology `json:"Topology"`
}

func newStreamsGroupTopologyValue(v *TopologyValue) *streamsGroupTopologyValue {
	topicInfo := func(t topology.TopicInfo) durableTopicInfo {
		return durableTopicInfo{
			Name: t.Name, Partitions: t.Partitions, ReplicationFactor: t.ReplicationFactor,
			Configs: convertAll(t.Configs, func(c topology.Config) durableKeyValue { return durableKeyValue(c) }),
		}
	}
	return &streamsGroupTopologyValue{Topology: durableTopology{
		Epoch: v.Topology.Epoch,
		Subtopologies: convertAll(v.Topology.Subtopologies, func(s topology.Subtopology) durableSubtopology {
			return durableSubtopology{
				ID: s.ID, SourceTopics: s.SourceTopics, SourceTopicRegex: s.SourceTopicRegex, RepartitionSinkTopics: s.RepartitionSinkTopics,
				RepartitionSourceTopics: convertAll(s.RepartitionSourceTopics, topicInfo),
				StateChangelogTopics:    convertAll(s.StateChangelogTopics, topicInfo),
				CopartitionGroups: convertAll(s.CopartitionGroups, func(c topology.CopartitionGroup) durableCopartitionGroup {
					return durableCopartitionGroup(c)
				}),
			}
		}),
	}}
}

func (d *streamsGroupTopologyValue) inMemory() (*TopologyValue, error) {
	topicInfo := func(t durableTopicInfo) topology.TopicInfo {
		return topology.TopicInfo{
			Name: t.Name, Partitions: t.Partitions, ReplicationFactor: t.ReplicationFactor,
			Configs: convertAll(t.Configs, func(c durableKeyValue) topology.Config { return topology.Config(c) }),
		}
	}
	return &TopologyValue{Topology: topology.Topology{
		Epoch: d.Topology.Epoch,
		Subtopologies: convertAll(d.Topology.Subtopologies, func(s durableSubtopology) topology.Subtopology {
			return topology.Subtopology{
				ID: s.ID, SourceTopics: s.SourceTopics, SourceTopicRegex: s.SourceTopicRegex, RepartitionSinkTopics: s.RepartitionSinkTopics,
				RepartitionSourceTopics: convertAll(s.RepartitionSourceTopics, topicInfo),
				StateChangelogTopics:    convertAll(s.StateChangelogTopics, topicInfo),
				CopartitionGroups: convertAll(s.CopartitionGroups, func(c durableCopartitionGroup) topology.CopartitionGroup {
					return topology.CopartitionGroup(c)
				}),
			}
		}),
	}}, nil
}

// streamshiftOwnershipValue is RecordOwnership's value (streamshift's own).
type streamshiftOwnershipValue struct {
	valueVersion
	Source        string `json:"Source"`
	UpstreamState string `json:"UpstreamState,omitempty"`
	ClaimedAtMs   int64  `json:"ClaimedAtMs"`
}

func newStreamshiftOwnershipValue(v *OwnershipValue) *streamshiftOwnershipValue {
	return &streamshiftOwnershipValue{Source: v.Source, UpstreamState: v.UpstreamState, ClaimedAtMs: v.ClaimedAtMs}
}

func (d *streamshiftOwnershipValue) inMemory() (*OwnershipValue, error) {
	return &OwnershipValue{Source: d.Source, UpstreamState: d.UpstreamState, ClaimedAtMs: d.ClaimedAtMs}, nil
}

// streamshiftGroupConfigValue is RecordGroupConfig's value (streamshift's
// own): configs by their Kafka names and printed values.
type streamshiftGroupConfigValue struct {
	valueVersion
	Configs []durableKeyValue `json:"Configs"`
}

func newStreamshiftGroupConfigValue(v *GroupConfigValue) *streamshiftGroupConfigValue {
	return &streamshiftGroupConfigValue{Configs: durableKeyValues(v.Configs)}
}

// inMemory refuses a bad config value; a config name this release does
// not know is kept for the load, which logs and ignores it.
func (d *streamshiftGroupConfigValue) inMemory() (*GroupConfigValue, error) {
	v := &GroupConfigValue{Configs: keyValues(d.Configs)}
	if _, _, err := v.Override(); err != nil {
		return nil, err
	}
	return v, nil
}

func durableKeyValues(kvs []KeyValue) []durableKeyValue {
	return convertAll(kvs, func(kv KeyValue) durableKeyValue { return durableKeyValue(kv) })
}

func keyValues(d []durableKeyValue) []KeyValue {
	return convertAll(d, func(kv durableKeyValue) KeyValue { return KeyValue(kv) })
}

// convertPtr maps an optional struct.
func convertPtr[A, B any](in *A, f func(A) B) *B {
	if in == nil {
		return nil
	}
	out := f(*in)
	return &out
}

// convertAll maps a slice, keeping nil apart from empty: a writer wrote
// null for one and [] for the other, and the golden bytes hold both.
func convertAll[A, B any](in []A, f func(A) B) []B {
	if in == nil {
		return nil
	}
	out := make([]B, len(in))
	for i, a := range in {
		out[i] = f(a)
	}
	return out
}

// unmarshalJSON decodes one JSON value, ignoring fields v does not have.
func unmarshalJSON(b []byte, v any) error {
	return decodeJSON(json.NewDecoder(bytes.NewReader(b)), v)
}

// strictUnmarshalJSON decodes one JSON value and refuses a field v does not
// have.
func strictUnmarshalJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return decodeJSON(d, v)
}

func decodeJSON(d *json.Decoder, v any) error {
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data")
	}
	return nil
}
