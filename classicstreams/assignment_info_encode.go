package classicstreams

import "math"

// Encode returns the wire form of a at a.Version, as Kafka Streams'
// AssignmentInfo.encode writes it. Fields the version cannot carry are left
// out (host maps below v2, standby host map below v5, nextRebalanceMs below
// v7), as Java does, except a non-zero ErrCode below v4 and named-topology
// tasks below v10, which are errors.
func (a *AssignmentInfo) Encode() ([]byte, error) {
	var dictBuf [16]DictionaryEntry
	dict := a.dictionaryFor(dictBuf[:0])
	n, err := a.size(dict)
	if err != nil {
		return nil, err
	}
	return a.appendTo(make([]byte, 0, n), dict), nil
}

// AppendTo appends the wire form of a to dst.
func (a *AssignmentInfo) AppendTo(dst []byte) ([]byte, error) {
	var dictBuf [16]DictionaryEntry
	dict := a.dictionaryFor(dictBuf[:0])
	if _, err := a.size(dict); err != nil {
		return dst, err
	}
	return a.appendTo(dst, dict), nil
}

// dictionaryFor returns the topic dictionary to write: a.TopicDictionary if
// it is consistent and names every topic the host maps use, else one built
// in order of first use (in buf, to avoid an allocation for few topics).
func (a *AssignmentInfo) dictionaryFor(buf []DictionaryEntry) []DictionaryEntry {
	if a.Version < minDictionaryVersion {
		return nil
	}
	maps := [2][]HostPartitions{a.PartitionsByHost, nil}
	if a.Version >= minStandbyHostMapVersion {
		maps[1] = a.StandbyPartitionsByHost
	}
	if hint := a.TopicDictionary; len(hint) > 0 && dictionaryValid(hint) {
		ok := true
	check:
		for _, m := range maps {
			for _, h := range m {
				for _, tp := range h.Partitions {
					if _, found := dictIndex(hint, tp.Topic); !found {
						ok = false
						break check
					}
				}
			}
		}
		if ok {
			return hint
		}
	}
	dict := buf
	for _, m := range maps {
		for _, h := range m {
			for _, tp := range h.Partitions {
				if _, found := dictIndex(dict, tp.Topic); !found {
					dict = append(dict, DictionaryEntry{Index: int32(len(dict)), Topic: tp.Topic})
				}
			}
		}
	}
	return dict
}

func dictionaryValid(d []DictionaryEntry) bool {
	for i := range d {
		for j := range i {
			if d[i].Index == d[j].Index || d[i].Topic == d[j].Topic {
				return false
			}
		}
	}
	return true
}

func dictIndex(d []DictionaryEntry, topic string) (int32, bool) {
	for _, e := range d {
		if e.Topic == topic {
			return e.Index, true
		}
	}
	return 0, false
}

func (a *AssignmentInfo) size(dict []DictionaryEntry) (int, error) {
	v := a.Version
	if v < 1 || v > LatestSupportedVersion {
		return 0, encodeErr(assignmentInfoName, "version %d outside 1-%d", v, LatestSupportedVersion)
	}
	if v < minErrCodeVersion && a.ErrCode != 0 {
		return 0, encodeErr(assignmentInfoName, "errCode %d cannot be sent at version %d (needs 4+)", a.ErrCode, v)
	}
	n := 4
	if v >= minCommonlyVersion {
		n += 4
	}
	taskSize := func(t TaskID) (int, error) {
		if t.NamedTopology == "" {
			if v >= minNamedTopologyVersion {
				return 12, nil
			}
			return 8, nil
		}
		if v < minNamedTopologyVersion {
			return 0, encodeErr(assignmentInfoName, "named topology task %s at version %d", t, v)
		}
		return 12 + 2*utf16Len(t.NamedTopology), nil
	}
	n += 4
	for _, t := range a.ActiveTasks {
		k, err := taskSize(t)
		if err != nil {
			return 0, err
		}
		n += k
	}
	n += 4
	for _, s := range a.StandbyTasks {
		k, err := taskSize(s.Task)
		if err != nil {
			return 0, err
		}
		n += k + 4
		for _, tp := range s.Partitions {
			k, err := utfSize(tp.Topic)
			if err != nil {
				return 0, err
			}
			n += k + 4
		}
	}
	hostMapSize := func(m []HostPartitions, withDict bool) (int, error) {
		n := 4
		for _, h := range m {
			k, err := utfSize(h.Host)
			if err != nil {
				return 0, err
			}
			n += k + 4 + 4
			if withDict {
				n += 8 * len(h.Partitions)
				continue
			}
			for _, tp := range h.Partitions {
				k, err := utfSize(tp.Topic)
				if err != nil {
					return 0, err
				}
				n += k + 4
			}
		}
		return n, nil
	}
	if v >= minDictionaryVersion {
		n += 4
		for _, e := range dict {
			k, err := utfSize(e.Topic)
			if err != nil {
				return 0, err
			}
			n += 4 + k
		}
	}
	if v >= minHostMapVersion {
		k, err := hostMapSize(a.PartitionsByHost, v >= minDictionaryVersion)
		if err != nil {
			return 0, err
		}
		n += k
	}
	if v >= minStandbyHostMapVersion {
		k, err := hostMapSize(a.StandbyPartitionsByHost, true)
		if err != nil {
			return 0, err
		}
		n += k
	}
	if v >= minErrCodeVersion {
		n += 4
	}
	if v >= minNextRebalanceVersion {
		n += 8
	}
	return n, nil
}

// utfSize is the writeUTF size of s (length prefix included); Java fails
// above 65535 encoded bytes.
func utfSize(s string) (int, error) {
	k := modifiedUTF8Len(s)
	if k > math.MaxUint16 {
		return 0, encodeErr(assignmentInfoName, "string of %d bytes is too long for writeUTF", k)
	}
	return 2 + k, nil
}

func (a *AssignmentInfo) appendTo(dst []byte, dict []DictionaryEntry) []byte {
	v := a.Version
	dst = appendInt32(dst, v)
	if v >= minCommonlyVersion {
		dst = appendInt32(dst, a.CommonlySupportedVersion)
	}
	dst = appendArray(dst, a.ActiveTasks, func(dst []byte, t TaskID) []byte { return appendAssignedTaskID(dst, t, v) })
	dst = appendArray(dst, a.StandbyTasks, func(dst []byte, s StandbyTask) []byte {
		return appendNamedPartitions(appendAssignedTaskID(dst, s.Task, v), s.Partitions)
	})
	switch {
	case v >= minDictionaryVersion:
		dst = appendArray(dst, dict, func(dst []byte, e DictionaryEntry) []byte { return appendUTF(appendInt32(dst, e.Index), e.Topic) })
		dst = appendHostMap(dst, a.PartitionsByHost, dict)
		if v >= minStandbyHostMapVersion {
			dst = appendHostMap(dst, a.StandbyPartitionsByHost, dict)
		}
	case v >= minHostMapVersion:
		dst = appendHostMap(dst, a.PartitionsByHost, nil)
	}
	if v >= minErrCodeVersion {
		dst = appendInt32(dst, a.ErrCode)
	}
	if v >= minNextRebalanceVersion {
		dst = appendInt64(dst, a.NextRebalanceMs)
	}
	return dst
}

func appendAssignedTaskID(dst []byte, t TaskID, v int32) []byte {
	dst = appendInt32(dst, t.Subtopology)
	dst = appendInt32(dst, t.Partition)
	if v >= minNamedTopologyVersion {
		dst = appendChars(dst, t.NamedTopology)
	}
	return dst
}

func appendNamedPartitions(dst []byte, tps []TopicPartition) []byte {
	return appendArray(dst, tps, func(dst []byte, tp TopicPartition) []byte {
		return appendInt32(appendUTF(dst, tp.Topic), tp.Partition)
	})
}

// appendHostMap writes a host map, with topic indices when dict is non-nil.
func appendHostMap(dst []byte, m []HostPartitions, dict []DictionaryEntry) []byte {
	dst = appendInt32(dst, int32(len(m)))
	for _, h := range m {
		dst = appendUTF(dst, h.Host)
		dst = appendInt32(dst, h.Port)
		if dict == nil {
			dst = appendNamedPartitions(dst, h.Partitions)
			continue
		}
		dst = appendInt32(dst, int32(len(h.Partitions)))
		for _, tp := range h.Partitions {
			idx, _ := dictIndex(dict, tp.Topic)
			dst = appendInt32(dst, idx)
			dst = appendInt32(dst, tp.Partition)
		}
	}
	return dst
}
