package streams

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// The previous release's record codec, frozen as a test fixture: what the
// group log code was before the durable format got explicit value structs
// (the JSON of the in-memory types, read with DisallowUnknownFields). Its
// types are copies of that release's in-memory types, so a later refactor of
// today's types does not move the fixture. Records written today must be
// read by it (a rollback reads them), and written back unchanged (it lost
// nothing). Do not change it; a release that changes the format again adds
// a fixture of its own predecessor.

type previousRecord struct {
	Type     RecordType
	GroupID  string
	MemberID string
	Value    any
}

type previousKeyValue struct {
	Key, Value string
}

type previousEndpoint struct {
	Host string
	Port uint16
}

type previousTasks map[string][]int32

type previousTaskSets struct {
	Active  previousTasks
	Standby previousTasks
	Warmup  previousTasks
}

type previousTaskID struct {
	Subtopology string
	Partition   int32
}

type previousOwnershipValue struct {
	Source        string
	UpstreamState string `json:",omitempty"`
	ClaimedAtMs   int64
}

type previousGroupMetadataValue struct {
	Epoch                  int32
	MetadataHash           uint64
	ValidatedTopologyEpoch int32
	LastAssignmentConfigs  []previousKeyValue
}

type previousClassicMemberMetadata struct {
	SessionTimeoutMs        int32
	ConsumerProtocolVersion int16
	SubscriptionVersion     int32
	LatestSupportedVersion  int32
}

type previousMemberMetadataValue struct {
	InstanceID         string
	RackID             string
	ClientID           string
	ClientHost         string
	RebalanceTimeoutMs int32
	TopologyEpoch      int32
	ProcessID          string
	UserEndpoint       *previousEndpoint
	ClientTags         []previousKeyValue
	Classic            *previousClassicMemberMetadata `json:",omitempty"`
}

type previousTargetAssignmentMetadataValue struct {
	AssignmentEpoch     int32
	AssignmentTimestamp int64
}

type previousTargetAssignmentMemberValue struct {
	Tasks previousTaskSets
}

type previousCurrentMemberAssignmentValue struct {
	MemberEpoch         int32
	PreviousMemberEpoch int32
	State               int8
	Assigned            previousTaskSets
	ActiveEpochs        map[previousTaskID]int32
	PendingRevocation   previousTaskSets
}

type previousTopicConfig struct {
	Key, Value string
}

type previousTopicInfo struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
	Configs           []previousTopicConfig
}

type previousCopartitionGroup struct {
	SourceTopics            []int16
	RepartitionSourceTopics []int16
}

type previousSubtopology struct {
	ID                      string
	SourceTopics            []string
	SourceTopicRegex        []string
	RepartitionSinkTopics   []string
	RepartitionSourceTopics []previousTopicInfo
	StateChangelogTopics    []previousTopicInfo
	CopartitionGroups       []previousCopartitionGroup
}

type previousTopology struct {
	Epoch         int32
	Subtopologies []previousSubtopology
}

type previousTopologyValue struct {
	Topology previousTopology
}

type previousGroupConfigValue struct {
	Configs []previousKeyValue
}

// The codec itself, as it was (names prefixed).

const previousRecordCodecVersion = 1

type previousRecordKeyJSON struct {
	V      int        `json:"v"`
	Type   RecordType `json:"type"`
	Group  string     `json:"group"`
	Member string     `json:"member,omitempty"`
}

type previousTaskEpochJSON struct {
	Subtopology string `json:"s"`
	Partition   int32  `json:"p"`
	Epoch       int32  `json:"e"`
}

type previousCurrentJSON struct {
	MemberEpoch         int32                   `json:"memberEpoch"`
	PreviousMemberEpoch int32                   `json:"previousMemberEpoch"`
	State               int8                    `json:"state"`
	Assigned            previousTaskSets        `json:"assigned"`
	ActiveEpochs        []previousTaskEpochJSON `json:"activeEpochs,omitempty"`
	PendingRevocation   previousTaskSets        `json:"pendingRevocation"`
}

func previousMarshalRecord(r previousRecord) (key, value []byte, err error) {
	key, err = json.Marshal(previousRecordKeyJSON{V: previousRecordCodecVersion, Type: r.Type, Group: r.GroupID, Member: r.MemberID})
	if err != nil || r.Value == nil {
		return key, nil, err
	}
	var v any
	switch val := r.Value.(type) {
	case *previousCurrentMemberAssignmentValue:
		c := previousCurrentJSON{
			MemberEpoch: val.MemberEpoch, PreviousMemberEpoch: val.PreviousMemberEpoch, State: val.State,
			Assigned: val.Assigned, PendingRevocation: val.PendingRevocation,
		}
		for t, e := range val.ActiveEpochs {
			c.ActiveEpochs = append(c.ActiveEpochs, previousTaskEpochJSON{t.Subtopology, t.Partition, e})
		}
		sort.Slice(c.ActiveEpochs, func(i, j int) bool {
			a, b := c.ActiveEpochs[i], c.ActiveEpochs[j]
			return a.Subtopology < b.Subtopology || (a.Subtopology == b.Subtopology && a.Partition < b.Partition)
		})
		v = c
	case *previousGroupMetadataValue, *previousMemberMetadataValue, *previousTargetAssignmentMetadataValue, *previousTargetAssignmentMemberValue, *previousTopologyValue, *previousOwnershipValue, *previousGroupConfigValue:
		v = val
	default:
		return nil, nil, fmt.Errorf("marshal %s record: value %T", r.Type, r.Value)
	}
	value, err = json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("marshal %s record: %w", r.Type, err)
	}
	return key, value, nil
}

func previousUnmarshalRecord(key, value []byte) (previousRecord, error) {
	var k previousRecordKeyJSON
	if err := previousStrictUnmarshal(key, &k); err != nil {
		return previousRecord{}, fmt.Errorf("record key: %w", err)
	}
	if k.V != previousRecordCodecVersion {
		return previousRecord{}, fmt.Errorf("record key: unsupported version %d", k.V)
	}
	r := previousRecord{Type: k.Type, GroupID: k.Group, MemberID: k.Member}
	memberKeyed := k.Type == RecordMemberMetadata || k.Type == RecordTargetAssignmentMember || k.Type == RecordCurrentMemberAssignment
	if memberKeyed != (k.Member != "") {
		return previousRecord{}, fmt.Errorf("record key: %s with member %q", k.Type, k.Member)
	}
	if value == nil {
		switch k.Type {
		case RecordGroupMetadata, RecordMemberMetadata, RecordTargetAssignmentMetadata, RecordTargetAssignmentMember, RecordCurrentMemberAssignment, RecordTopology, RecordOwnership, RecordGroupConfig:
			return r, nil
		}
		return previousRecord{}, fmt.Errorf("record key: unknown type %d", k.Type)
	}
	var err error
	switch k.Type {
	case RecordGroupMetadata:
		v := &previousGroupMetadataValue{}
		err, r.Value = previousStrictUnmarshal(value, v), v
	case RecordMemberMetadata:
		v := &previousMemberMetadataValue{}
		err, r.Value = previousStrictUnmarshal(value, v), v
	case RecordTargetAssignmentMetadata:
		v := &previousTargetAssignmentMetadataValue{}
		err, r.Value = previousStrictUnmarshal(value, v), v
	case RecordTargetAssignmentMember:
		v := &previousTargetAssignmentMemberValue{}
		if err = previousStrictUnmarshal(value, v); err == nil {
			v.Tasks, err = previousCheckedTaskSets(v.Tasks)
		}
		r.Value = v
	case RecordCurrentMemberAssignment:
		var c previousCurrentJSON
		if err = previousStrictUnmarshal(value, &c); err == nil {
			v := &previousCurrentMemberAssignmentValue{MemberEpoch: c.MemberEpoch, PreviousMemberEpoch: c.PreviousMemberEpoch, State: c.State}
			if v.Assigned, err = previousCheckedTaskSets(c.Assigned); err == nil {
				v.PendingRevocation, err = previousCheckedTaskSets(c.PendingRevocation)
			}
			if len(c.ActiveEpochs) > 0 {
				v.ActiveEpochs = make(map[previousTaskID]int32, len(c.ActiveEpochs))
				for _, e := range c.ActiveEpochs {
					v.ActiveEpochs[previousTaskID{e.Subtopology, e.Partition}] = e.Epoch
				}
			}
			r.Value = v
		}
	case RecordTopology:
		v := &previousTopologyValue{}
		err, r.Value = previousStrictUnmarshal(value, v), v
	case RecordOwnership:
		v := &previousOwnershipValue{}
		err, r.Value = previousStrictUnmarshal(value, v), v
	case RecordGroupConfig:
		v := &previousGroupConfigValue{}
		if err = previousStrictUnmarshal(value, v); err == nil {
			err = previousCheckGroupConfigs(v)
		}
		r.Value = v
	default:
		return previousRecord{}, fmt.Errorf("record key: unknown type %d", k.Type)
	}
	if err != nil {
		return previousRecord{}, fmt.Errorf("%s record value: %w", k.Type, err)
	}
	return r, nil
}

func previousStrictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data")
	}
	return nil
}

// previousCheckedTaskSets normalizes with today's normalizeTasks: the
// canonical form of tasks is behaviour, not format.
func previousCheckedTaskSets(t previousTaskSets) (previousTaskSets, error) {
	for _, ts := range []previousTasks{t.Active, t.Standby, t.Warmup} {
		for _, ps := range ts {
			for _, p := range ps {
				if p < 0 {
					return previousTaskSets{}, fmt.Errorf("negative task partition %d", p)
				}
			}
		}
	}
	n := func(t previousTasks) previousTasks { return previousTasks(NormalizeTasks(Tasks(t))) }
	return previousTaskSets{n(t.Active), n(t.Standby), n(t.Warmup)}, nil
}

// previousCheckGroupConfigs is the previous GroupConfigValue.override: it
// refused a config it did not know, checked with today's definitions.
func previousCheckGroupConfigs(v *previousGroupConfigValue) error {
	var c GroupConfigValue
	for _, kv := range v.Configs {
		if _, ok := GroupConfigDefOf(kv.Key); !ok {
			return fmt.Errorf("unknown group config %q", kv.Key)
		}
		c.Configs = append(c.Configs, KeyValue(kv))
	}
	_, _, err := c.Override()
	return err
}
