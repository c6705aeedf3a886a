package coordinator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// Record encoding for a durable group log (a compacted topic on the upstream
// cluster): the key names what the record overwrites, the value is the
// record's content, and a tombstone has no value. Both are versioned JSON:
// the log is streamshift's own, so readability and forward compatibility
// matter more than size.

const recordCodecVersion = 1

type recordKeyJSON struct {
	V      int        `json:"v"`
	Type   RecordType `json:"type"`
	Group  string     `json:"group"`
	Member string     `json:"member,omitempty"`
}

type taskEpochJSON struct {
	Subtopology string `json:"s"`
	Partition   int32  `json:"p"`
	Epoch       int32  `json:"e"`
}

type currentJSON struct {
	MemberEpoch         int32           `json:"memberEpoch"`
	PreviousMemberEpoch int32           `json:"previousMemberEpoch"`
	State               MemberState     `json:"state"`
	Assigned            TaskSets        `json:"assigned"`
	ActiveEpochs        []taskEpochJSON `json:"activeEpochs,omitempty"`
	PendingRevocation   TaskSets        `json:"pendingRevocation"`
}

// MarshalRecord encodes a record as a log key and value (nil for a
// tombstone).
func MarshalRecord(r Record) (key, value []byte, err error) {
	key, err = json.Marshal(recordKeyJSON{V: recordCodecVersion, Type: r.Type, Group: r.GroupID, Member: r.MemberID})
	if err != nil || r.Tombstone() {
		return key, nil, err
	}
	var v any
	switch val := r.Value.(type) {
	case *CurrentMemberAssignmentValue:
		c := currentJSON{
			MemberEpoch: val.MemberEpoch, PreviousMemberEpoch: val.PreviousMemberEpoch, State: val.State,
			Assigned: val.Assigned, PendingRevocation: val.PendingRevocation,
		}
		for t, e := range val.ActiveEpochs {
			c.ActiveEpochs = append(c.ActiveEpochs, taskEpochJSON{t.Subtopology, t.Partition, e})
		}
		sort.Slice(c.ActiveEpochs, func(i, j int) bool {
			a, b := c.ActiveEpochs[i], c.ActiveEpochs[j]
			return a.Subtopology < b.Subtopology || (a.Subtopology == b.Subtopology && a.Partition < b.Partition)
		})
		v = c
	case *GroupMetadataValue, *MemberMetadataValue, *TargetAssignmentMetadataValue, *TargetAssignmentMemberValue, *TopologyValue, *OwnershipValue, *GroupConfigValue:
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

// UnmarshalRecord decodes what MarshalRecord encoded. It never panics on
// bad input (the bytes come back from the network).
func UnmarshalRecord(key, value []byte) (Record, error) {
	var k recordKeyJSON
	if err := strictUnmarshal(key, &k); err != nil {
		return Record{}, fmt.Errorf("record key: %w", err)
	}
	if k.V != recordCodecVersion {
		return Record{}, fmt.Errorf("record key: unsupported version %d", k.V)
	}
	r := Record{Type: k.Type, GroupID: k.Group, MemberID: k.Member}
	memberKeyed := k.Type == RecordMemberMetadata || k.Type == RecordTargetAssignmentMember || k.Type == RecordCurrentMemberAssignment
	if memberKeyed != (k.Member != "") {
		return Record{}, fmt.Errorf("record key: %s with member %q", k.Type, k.Member)
	}
	if value == nil {
		switch k.Type {
		case RecordGroupMetadata, RecordMemberMetadata, RecordTargetAssignmentMetadata, RecordTargetAssignmentMember, RecordCurrentMemberAssignment, RecordTopology, RecordOwnership, RecordGroupConfig:
			return r, nil
		}
		return Record{}, fmt.Errorf("record key: unknown type %d", k.Type)
	}
	var err error
	switch k.Type {
	case RecordGroupMetadata:
		v := &GroupMetadataValue{}
		err, r.Value = strictUnmarshal(value, v), v
	case RecordMemberMetadata:
		v := &MemberMetadataValue{}
		err, r.Value = strictUnmarshal(value, v), v
	case RecordTargetAssignmentMetadata:
		v := &TargetAssignmentMetadataValue{}
		err, r.Value = strictUnmarshal(value, v), v
	case RecordTargetAssignmentMember:
		v := &TargetAssignmentMemberValue{}
		if err = strictUnmarshal(value, v); err == nil {
			v.Tasks, err = checkedTaskSets(v.Tasks)
		}
		r.Value = v
	case RecordCurrentMemberAssignment:
		var c currentJSON
		if err = strictUnmarshal(value, &c); err == nil {
			v := &CurrentMemberAssignmentValue{MemberEpoch: c.MemberEpoch, PreviousMemberEpoch: c.PreviousMemberEpoch, State: c.State}
			if v.Assigned, err = checkedTaskSets(c.Assigned); err == nil {
				v.PendingRevocation, err = checkedTaskSets(c.PendingRevocation)
			}
			if len(c.ActiveEpochs) > 0 {
				v.ActiveEpochs = make(map[TaskID]int32, len(c.ActiveEpochs))
				for _, e := range c.ActiveEpochs {
					v.ActiveEpochs[TaskID{e.Subtopology, e.Partition}] = e.Epoch
				}
			}
			r.Value = v
		}
	case RecordTopology:
		v := &TopologyValue{}
		err, r.Value = strictUnmarshal(value, v), v
	case RecordOwnership:
		v := &OwnershipValue{}
		err, r.Value = strictUnmarshal(value, v), v
	case RecordGroupConfig:
		v := &GroupConfigValue{}
		if err = strictUnmarshal(value, v); err == nil {
			_, err = v.override()
		}
		r.Value = v
	default:
		return Record{}, fmt.Errorf("record key: unknown type %d", k.Type)
	}
	if err != nil {
		return Record{}, fmt.Errorf("%s record value: %w", k.Type, err)
	}
	return r, nil
}

func strictUnmarshal(b []byte, v any) error {
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

// checkedTaskSets brings decoded tasks to the canonical form (sorted, no
// duplicates, no empty entries), which the reconciliation relies on.
func checkedTaskSets(t TaskSets) (TaskSets, error) {
	for _, ts := range []Tasks{t.Active, t.Standby, t.Warmup} {
		for _, ps := range ts {
			for _, p := range ps {
				if p < 0 {
					return TaskSets{}, fmt.Errorf("negative task partition %d", p)
				}
			}
		}
	}
	return TaskSets{normalizeTasks(t.Active), normalizeTasks(t.Standby), normalizeTasks(t.Warmup)}, nil
}
