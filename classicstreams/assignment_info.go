package classicstreams

import (
	"math"
)

// AssignmentInfo is Kafka Streams' SyncGroup user data, hand-encoded with
// DataOutputStream (versions 1-11).
//
// Lists keep wire order (Java writes its maps in hash order), so decoding and
// encoding again gives the same bytes.
type AssignmentInfo struct {
	Version int32 `json:"version"`
	// CommonlySupportedVersion (v3+) is UnknownVersion for v1 and v2.
	CommonlySupportedVersion int32 `json:"commonlySupportedVersion"`
	// ActiveTasks has one entry per assigned partition, aligned with the
	// assigned partitions sorted by (topic, partition): see AlignActiveTasks.
	ActiveTasks []TaskID `json:"activeTasks"`
	// StandbyTasks maps each standby task to its source partitions.
	StandbyTasks []StandbyTask `json:"standbyTasks"`
	// PartitionsByHost (v2+) is the IQ map of active partitions per
	// application.server endpoint; StandbyPartitionsByHost (v6+) the same for
	// standby tasks.
	PartitionsByHost        []HostPartitions `json:"partitionsByHost"`
	StandbyPartitionsByHost []HostPartitions `json:"standbyPartitionsByHost"`
	// ErrCode (v4+) is an AssignorError code.
	ErrCode int32 `json:"errCode"`
	// NextRebalanceMs (v7+): math.MaxInt64 for none, 0 for now, otherwise an
	// epoch-ms deadline. Decoding an older version gives math.MaxInt64.
	NextRebalanceMs int64 `json:"nextRebalanceMs"`
	// TopicDictionary (v5+) is the topic dictionary as decoded. Encoding
	// reuses it when it names every topic of the host maps, so decoded
	// bytes re-encode identically; otherwise a dictionary of the host maps'
	// topics is built in order of first use.
	TopicDictionary []DictionaryEntry `json:"topicDictionary,omitempty"`
}

// StandbyTask is a standby task with its source partitions.
type StandbyTask struct {
	Task       TaskID           `json:"task"`
	Partitions []TopicPartition `json:"partitions"`
}

// HostInfo is an application.server endpoint (Kafka Streams' HostInfo).
type HostInfo struct {
	Host string `json:"host"`
	Port int32  `json:"port"`
}

// HostPartitions is one entry of an IQ host map.
type HostPartitions struct {
	HostInfo
	Partitions []TopicPartition `json:"partitions"`
}

// DictionaryEntry is one topic of an AssignmentInfo topic dictionary.
type DictionaryEntry struct {
	Index int32  `json:"index"`
	Topic string `json:"topic"`
}

const assignmentInfoName = "AssignmentInfo"

// Version thresholds of AssignmentInfo.
const (
	minCommonlyVersion       = 3
	minHostMapVersion        = 2
	minErrCodeVersion        = 4
	minDictionaryVersion     = 5
	minStandbyHostMapVersion = 6
	minNextRebalanceVersion  = 7
)

// DecodeAssignmentInfo decodes Kafka Streams' AssignmentInfo. Versions
// outside 1-11 fail, as they do in Kafka Streams.
func DecodeAssignmentInfo(b []byte) (*AssignmentInfo, error) {
	r := reader{src: b, payload: assignmentInfoName}
	a := &AssignmentInfo{CommonlySupportedVersion: UnknownVersion, NextRebalanceMs: math.MaxInt64}
	a.Version = r.int32("version")
	v := a.Version
	if r.err == nil && (v < 1 || v > LatestSupportedVersion) {
		r.failAt(0, "version", ErrUnknownVersion)
	}
	if r.err != nil {
		return nil, r.err
	}
	if v >= minCommonlyVersion {
		a.CommonlySupportedVersion = r.int32("commonlySupportedVersion")
	}
	taskSize := 8
	if v >= minNamedTopologyVersion {
		taskSize = 12
	}
	if n := r.count("activeTasks", taskSize, false); n > 0 {
		a.ActiveTasks = make([]TaskID, n)
		for i := range a.ActiveTasks {
			a.ActiveTasks[i] = r.assignedTaskID("activeTasks", v)
		}
	}
	if n := r.count("standbyTasks", taskSize+4, false); n > 0 {
		a.StandbyTasks = make([]StandbyTask, n)
		for i := range a.StandbyTasks {
			a.StandbyTasks[i].Task = r.assignedTaskID("standbyTasks", v)
			a.StandbyTasks[i].Partitions = r.namedPartitions("standbyTasks.partitions", nil)
			if r.err != nil {
				return nil, r.err
			}
		}
	}
	switch {
	case v >= minStandbyHostMapVersion:
		a.TopicDictionary = r.dictionary()
		a.PartitionsByHost = r.hostMap("partitionsByHost", a.TopicDictionary)
		a.StandbyPartitionsByHost = r.hostMap("standbyPartitionsByHost", a.TopicDictionary)
	case v >= minDictionaryVersion:
		a.TopicDictionary = r.dictionary()
		a.PartitionsByHost = r.hostMap("partitionsByHost", a.TopicDictionary)
	case v >= minHostMapVersion:
		a.PartitionsByHost = r.hostMap("partitionsByHost", nil)
	}
	if v >= minErrCodeVersion {
		a.ErrCode = r.int32("errCode")
	}
	if v >= minNextRebalanceVersion {
		a.NextRebalanceMs = r.int64("nextRebalanceMs")
	}
	if r.err != nil {
		return nil, r.err
	}
	return a, nil
}

func (r *reader) assignedTaskID(field string, version int32) TaskID {
	var t TaskID
	t.Subtopology = r.int32(field)
	t.Partition = r.int32(field)
	if version >= minNamedTopologyVersion {
		t.NamedTopology = r.chars(field + ".namedTopology")
	}
	return t
}

// namedPartitions reads a partition set: int32 count, then either
// {UTF topic, int32 partition} or, with a dictionary, {int32 index, int32
// partition}.
func (r *reader) namedPartitions(field string, dict []DictionaryEntry) []TopicPartition {
	n := r.count(field, 6, false) // shortest entry: empty UTF topic + partition
	if n <= 0 {
		return nil
	}
	if dict != nil && int64(n)*8 > int64(r.remaining()) {
		r.failAt(r.off-4, field, ErrLengthTooLarge)
		return nil
	}
	out := make([]TopicPartition, n)
	for i := range out {
		if dict != nil {
			at := r.off
			idx := r.int32(field + ".topicIndex")
			topic, ok := lookupTopic(dict, idx)
			if !ok && r.err == nil {
				r.failAt(at, field+".topicIndex", ErrUnknownTopicIndex)
			}
			out[i].Topic = topic
		} else {
			out[i].Topic = r.utf(field + ".topic")
		}
		out[i].Partition = r.int32(field + ".partition")
		if r.err != nil {
			return nil
		}
	}
	return out
}

func lookupTopic(dict []DictionaryEntry, idx int32) (string, bool) {
	// Java assigns indices 0..n-1, usually written in index order.
	if idx >= 0 && int(idx) < len(dict) && dict[idx].Index == idx {
		return dict[idx].Topic, true
	}
	for _, e := range dict {
		if e.Index == idx {
			return e.Topic, true
		}
	}
	return "", false
}

func (r *reader) dictionary() []DictionaryEntry {
	n := r.count("topicDictionary", 6, false)
	if n <= 0 {
		if r.err == nil {
			return []DictionaryEntry{} // present but empty: lookups fail, not nil-skip
		}
		return nil
	}
	out := make([]DictionaryEntry, n)
	for i := range out {
		out[i].Index = r.int32("topicDictionary.index")
		out[i].Topic = r.utf("topicDictionary.topic")
		if r.err != nil {
			return nil
		}
	}
	return out
}

func (r *reader) hostMap(field string, dict []DictionaryEntry) []HostPartitions {
	n := r.count(field, 2+4+4, false)
	if n <= 0 {
		return nil
	}
	out := make([]HostPartitions, n)
	for i := range out {
		out[i].Host = r.utf(field + ".host")
		out[i].Port = r.int32(field + ".port")
		out[i].Partitions = r.namedPartitions(field+".partitions", dict)
		if r.err != nil {
			return nil
		}
	}
	return out
}
