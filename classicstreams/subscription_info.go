package classicstreams

import "math"

// Kafka Streams rebalance metadata versions (StreamsAssignmentProtocolVersions).
const (
	// LatestSupportedVersion is the highest SubscriptionInfo / AssignmentInfo
	// version of every Kafka Streams release from 3.2 to 4.x.
	LatestSupportedVersion = 11
	// UnknownVersion is the latest supported / commonly supported version
	// of v1 and v2 payloads, which do not carry one.
	UnknownVersion = -1

	minOffsetSumVersion     = 7  // task offset sums replace prev/standby task lists
	minUniqueFieldVersion   = 8  // uniqueField
	minErrorCodeVersion     = 9  // SubscriptionInfo errorCode
	minNamedTopologyVersion = 10 // flat offset sums with named topology; named TaskIds in AssignmentInfo
	minClientTagsVersion    = 11 // client tags
)

// Offset sums with a special meaning (Kafka Streams' Task.LATEST_OFFSET and
// SubscriptionInfo.UNKNOWN_OFFSET_SUM).
const (
	// OffsetSumRunningActive is reported for a RUNNING stateful active task.
	OffsetSumRunningActive int64 = -2
	// OffsetSumUnknown is never sent; Java synthesizes it for the standby
	// tasks of a v1-v6 subscription, and so does SubscriptionInfo.OffsetSums.
	OffsetSumUnknown int64 = -3
)

// AssignorError codes (SubscriptionInfo errorCode v9+, AssignmentInfo errCode v4+).
const (
	AssignorErrorNone                          int32 = 0
	AssignorErrorIncompleteSourceTopicMetadata int32 = 1
	AssignorErrorVersionProbing                int32 = 2
	AssignorErrorAssignment                    int32 = 3
	AssignorErrorShutdownRequested             int32 = 4
)

// SubscriptionInfo is Kafka Streams' JoinGroup user data (SubscriptionInfoData,
// versions 1-11). Fields absent at Version are zero, except
// LatestSupportedVersion, which is UnknownVersion for v1 and v2.
//
// Lists keep wire order (Java writes them in hash-map order), so decoding
// and encoding again gives the same bytes.
type SubscriptionInfo struct {
	Version                int32     `json:"version"`
	LatestSupportedVersion int32     `json:"latestSupportedVersion"`
	ProcessID              ProcessID `json:"processId"`
	// PrevTasks and StandbyTasks are on the wire in v1-v6 only; from v7 the
	// same information is in TaskOffsetSums. See OffsetSums.
	PrevTasks    []TaskID `json:"prevTasks,omitempty"`
	StandbyTasks []TaskID `json:"standbyTasks,omitempty"`
	// UserEndPoint is application.server ("host:port"), v2+; empty if unset.
	UserEndPoint   string          `json:"userEndPoint,omitempty"`
	TaskOffsetSums []TaskOffsetSum `json:"taskOffsetSums,omitempty"`
	// UniqueField (v8+) changes on every join; it carries no information.
	UniqueField int8  `json:"uniqueField"`
	ErrorCode   int32 `json:"errorCode"`
	// ClientTags (v11+), in wire order; keys are unique.
	ClientTags []ClientTag `json:"clientTags,omitempty"`
	// Future is set by DecodeSubscriptionInfo for a version above
	// LatestSupportedVersion: only Version and LatestSupportedVersion were
	// read, as Kafka Streams itself does.
	Future bool `json:"future,omitempty"`
}

// TaskOffsetSum is the sum of a task's changelog offsets in the member's
// local state (v7+). OffsetSum is OffsetSumRunningActive for a running
// stateful active task.
type TaskOffsetSum struct {
	Task      TaskID `json:"task"`
	OffsetSum int64  `json:"offsetSum"`
}

// ClientTag is one rack-awareness client tag (KIP-708).
type ClientTag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// NamedTopologyTasks returns the tasks of the subscription that belong to a
// named topology, which the streams protocol cannot serve.
func (s *SubscriptionInfo) NamedTopologyTasks() []TaskID {
	var out []TaskID
	for _, o := range s.TaskOffsetSums {
		if o.Task.NamedTopology != "" {
			out = append(out, o.Task)
		}
	}
	return out
}

// OffsetSums returns the task offset sums as Kafka Streams' leader sees them
// (SubscriptionInfo.taskOffsetSums): the list itself for v7+, and for v1-v6
// OffsetSumRunningActive for each previous task and OffsetSumUnknown for each
// standby task.
func (s *SubscriptionInfo) OffsetSums() []TaskOffsetSum {
	if s.Version >= minOffsetSumVersion {
		return s.TaskOffsetSums
	}
	out := make([]TaskOffsetSum, 0, len(s.PrevTasks)+len(s.StandbyTasks))
	for _, t := range s.PrevTasks {
		out = append(out, TaskOffsetSum{Task: t, OffsetSum: OffsetSumRunningActive})
	}
	for _, t := range s.StandbyTasks {
		out = append(out, TaskOffsetSum{Task: t, OffsetSum: OffsetSumUnknown})
	}
	return out
}

// ShutdownRequested reports whether the member asks the whole application to
// shut down (KIP-671): the streams protocol's ShutdownApplication.
func (s *SubscriptionInfo) ShutdownRequested() bool {
	return s.ErrorCode == AssignorErrorShutdownRequested
}

// ClientTagMap returns the client tags as a map, the streams protocol's form.
func (s *SubscriptionInfo) ClientTagMap() map[string]string {
	m := make(map[string]string, len(s.ClientTags))
	for _, t := range s.ClientTags {
		m[t.Key] = t.Value
	}
	return m
}

const subscriptionInfoName = "SubscriptionInfo"

// Minimum wire sizes of list elements, to bound counts before allocating.
const (
	taskIDSize       = 8             // v1-6 TaskId: int32 + int32
	nestedSumSize    = 4 + 4         // v7-9 TaskOffsetSum: topicGroupId + empty list
	partitionSumSize = 4 + 8         // v7-9 PartitionToOffsetSum
	flatSumSize      = 4 + 4 + 8 + 2 // v10+ TaskOffsetSum, null named topology
	clientTagSize    = 8             // two empty byte arrays
)

// DecodeSubscriptionInfo decodes Kafka Streams' SubscriptionInfo. A version
// above LatestSupportedVersion never fails once its 8-byte header is there:
// the result has Future set and only the header filled.
func DecodeSubscriptionInfo(b []byte) (*SubscriptionInfo, error) {
	s := new(SubscriptionInfo)
	if err := s.decode(b); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *SubscriptionInfo) decode(b []byte) error {
	r := reader{src: b, payload: subscriptionInfoName}
	*s = SubscriptionInfo{LatestSupportedVersion: UnknownVersion}
	s.Version = r.int32("version")
	if r.err != nil {
		return r.err
	}
	v := s.Version
	if v < 1 {
		r.failAt(0, "version", ErrUnknownVersion)
		return r.err
	}
	if v > LatestSupportedVersion {
		s.LatestSupportedVersion = r.int32("latestSupportedVersion")
		s.Future = true
		if r.err != nil {
			return r.err
		}
		return nil
	}
	if v >= 3 {
		s.LatestSupportedVersion = r.int32("latestSupportedVersion")
	}
	s.ProcessID = r.uuid("processId")
	if v < minOffsetSumVersion {
		s.PrevTasks = r.taskIDs("prevTasks")
		s.StandbyTasks = r.taskIDs("standbyTasks")
	}
	if v >= 2 {
		if ep := r.bytes32("userEndPoint", false); len(ep) > 0 {
			s.UserEndPoint = string(ep)
		}
	}
	if v >= minNamedTopologyVersion {
		s.TaskOffsetSums = r.flatOffsetSums()
	} else if v >= minOffsetSumVersion {
		s.TaskOffsetSums = r.nestedOffsetSums()
	}
	if v >= minUniqueFieldVersion {
		s.UniqueField = r.int8("uniqueField")
	}
	if v >= minErrorCodeVersion {
		s.ErrorCode = r.int32("errorCode")
	}
	if v >= minClientTagsVersion {
		n := r.count("clientTags", clientTagSize, false)
		if n > 0 {
			s.ClientTags = make([]ClientTag, n)
			for i := range s.ClientTags {
				s.ClientTags[i].Key = string(r.bytes32("clientTags.key", false))
				s.ClientTags[i].Value = string(r.bytes32("clientTags.value", false))
				if r.err != nil {
					break
				}
			}
		}
	}
	if r.err != nil {
		return r.err
	}
	return nil
}

func (r *reader) taskIDs(field string) []TaskID {
	n := r.count(field, taskIDSize, false)
	if n <= 0 {
		return nil
	}
	out := make([]TaskID, n)
	for i := range out {
		out[i].Subtopology = r.int32(field)
		out[i].Partition = r.int32(field)
	}
	return out
}

func (r *reader) flatOffsetSums() []TaskOffsetSum {
	n := r.count("taskOffsetSums", flatSumSize, false)
	if n <= 0 {
		return nil
	}
	out := make([]TaskOffsetSum, n)
	for i := range out {
		o := &out[i]
		o.Task.Subtopology = r.int32("taskOffsetSums.topicGroupId")
		o.Task.Partition = r.int32("taskOffsetSums.partition")
		o.OffsetSum = r.int64("taskOffsetSums.offsetSum")
		o.Task.NamedTopology, _ = r.string16("taskOffsetSums.namedTopology", true)
		if r.err != nil {
			return nil
		}
	}
	return out
}

// nestedOffsetSums flattens the v7-v9 layout (per subtopology, a list of
// partition sums). It reads the input twice, first to size the result.
func (r *reader) nestedOffsetSums() []TaskOffsetSum {
	start := r.off
	groups := r.count("taskOffsetSums", nestedSumSize, false)
	if groups <= 0 {
		return nil
	}
	total := 0
	for range groups {
		r.int32("taskOffsetSums.topicGroupId")
		n := r.count("taskOffsetSums.partitionToOffsetSum", partitionSumSize, false)
		if r.err != nil {
			return nil
		}
		r.off += n * partitionSumSize // count checked that they fit
		total += n
	}
	r.off = start + 4
	out := make([]TaskOffsetSum, 0, total)
	for range groups {
		g := r.int32("taskOffsetSums.topicGroupId")
		n := r.count("taskOffsetSums.partitionToOffsetSum", partitionSumSize, false)
		for range n {
			p := r.int32("taskOffsetSums.partition")
			sum := r.int64("taskOffsetSums.offsetSum")
			out = append(out, TaskOffsetSum{Task: TaskID{Subtopology: g, Partition: p}, OffsetSum: sum})
		}
	}
	return out
}

// Encode returns the wire form of s at s.Version, as Kafka Streams'
// SubscriptionInfo.encode writes it.
func (s *SubscriptionInfo) Encode() ([]byte, error) {
	n, err := s.size()
	if err != nil {
		return nil, err
	}
	return s.appendTo(make([]byte, 0, n)), nil
}

// AppendTo appends the wire form of s to dst.
func (s *SubscriptionInfo) AppendTo(dst []byte) ([]byte, error) {
	if _, err := s.size(); err != nil {
		return dst, err
	}
	return s.appendTo(dst), nil
}

// size validates s for its version and returns its encoded length.
func (s *SubscriptionInfo) size() (int, error) {
	v := s.Version
	if v < 1 || v > LatestSupportedVersion {
		return 0, encodeErr(subscriptionInfoName, "version %d outside 1-%d", v, LatestSupportedVersion)
	}
	n := 4 + 16
	if v >= 3 {
		n += 4
		if s.LatestSupportedVersion < v {
			return 0, encodeErr(subscriptionInfoName, "latest supported version %d below version %d", s.LatestSupportedVersion, v)
		}
	}
	if v < minOffsetSumVersion {
		n += 4 + taskIDSize*len(s.PrevTasks) + 4 + taskIDSize*len(s.StandbyTasks)
		for _, t := range s.PrevTasks {
			if t.NamedTopology != "" {
				return 0, encodeErr(subscriptionInfoName, "named topology task %s at version %d", t, v)
			}
		}
		for _, t := range s.StandbyTasks {
			if t.NamedTopology != "" {
				return 0, encodeErr(subscriptionInfoName, "named topology task %s at version %d", t, v)
			}
		}
	} else if len(s.PrevTasks)+len(s.StandbyTasks) > 0 {
		return 0, encodeErr(subscriptionInfoName, "prev/standby task lists at version %d (use TaskOffsetSums)", v)
	}
	if v >= 2 {
		n += 4 + len(s.UserEndPoint)
	}
	if v >= minNamedTopologyVersion {
		n += 4
		for _, o := range s.TaskOffsetSums {
			n += 4 + 4 + 8 + 2 + len(o.Task.NamedTopology)
			if len(o.Task.NamedTopology) > math.MaxInt16 {
				return 0, encodeErr(subscriptionInfoName, "named topology of %s too long", o.Task)
			}
		}
	} else if v >= minOffsetSumVersion {
		n += 4
		for i, o := range s.TaskOffsetSums {
			if o.Task.NamedTopology != "" {
				return 0, encodeErr(subscriptionInfoName, "named topology task %s at version %d", o.Task, v)
			}
			if firstOfGroup(s.TaskOffsetSums, i) {
				n += 4 + 4
			}
			n += partitionSumSize
		}
	} else if len(s.TaskOffsetSums) > 0 {
		return 0, encodeErr(subscriptionInfoName, "task offset sums at version %d (use PrevTasks/StandbyTasks)", v)
	}
	if v >= minUniqueFieldVersion {
		n++
	}
	if v >= minErrorCodeVersion {
		n += 4
	}
	if v >= minClientTagsVersion {
		n += 4
		for _, t := range s.ClientTags {
			n += 8 + len(t.Key) + len(t.Value)
		}
	}
	return n, nil
}

// firstOfGroup reports whether sums[i] is the first entry of its
// subtopology: v7-v9 group the sums per subtopology, in order of first
// appearance, which reproduces the order Java wrote.
func firstOfGroup(sums []TaskOffsetSum, i int) bool {
	for j := range i {
		if sums[j].Task.Subtopology == sums[i].Task.Subtopology {
			return false
		}
	}
	return true
}

func (s *SubscriptionInfo) appendTo(dst []byte) []byte {
	v := s.Version
	dst = appendInt32(dst, v)
	if v >= 3 {
		dst = appendInt32(dst, s.LatestSupportedVersion)
	}
	dst = append(dst, s.ProcessID[:]...)
	if v < minOffsetSumVersion {
		dst = appendTaskIDs(dst, s.PrevTasks)
		dst = appendTaskIDs(dst, s.StandbyTasks)
	}
	if v >= 2 {
		dst = appendBytes32(dst, s.UserEndPoint)
	}
	if v >= minNamedTopologyVersion {
		dst = appendInt32(dst, int32(len(s.TaskOffsetSums)))
		for _, o := range s.TaskOffsetSums {
			dst = appendInt32(dst, o.Task.Subtopology)
			dst = appendInt32(dst, o.Task.Partition)
			dst = appendInt64(dst, o.OffsetSum)
			if o.Task.NamedTopology == "" {
				dst = appendInt16(dst, -1)
			} else {
				dst = appendInt16(dst, int16(len(o.Task.NamedTopology)))
				dst = append(dst, o.Task.NamedTopology...)
			}
		}
	} else if v >= minOffsetSumVersion {
		dst = appendNestedOffsetSums(dst, s.TaskOffsetSums)
	}
	if v >= minUniqueFieldVersion {
		dst = append(dst, byte(s.UniqueField))
	}
	if v >= minErrorCodeVersion {
		dst = appendInt32(dst, s.ErrorCode)
	}
	if v >= minClientTagsVersion {
		dst = appendArray(dst, s.ClientTags, func(dst []byte, t ClientTag) []byte {
			return appendBytes32(appendBytes32(dst, t.Key), t.Value)
		})
	}
	return dst
}

func appendTaskIDs(dst []byte, ts []TaskID) []byte {
	return appendArray(dst, ts, func(dst []byte, t TaskID) []byte {
		return appendInt32(appendInt32(dst, t.Subtopology), t.Partition)
	})
}

func appendNestedOffsetSums(dst []byte, sums []TaskOffsetSum) []byte {
	groups := 0
	for i := range sums {
		if firstOfGroup(sums, i) {
			groups++
		}
	}
	dst = appendInt32(dst, int32(groups))
	for i, o := range sums {
		if !firstOfGroup(sums, i) {
			continue
		}
		g := o.Task.Subtopology
		n := 0
		for _, x := range sums[i:] {
			if x.Task.Subtopology == g {
				n++
			}
		}
		dst = appendInt32(dst, g)
		dst = appendInt32(dst, int32(n))
		for _, x := range sums[i:] {
			if x.Task.Subtopology == g {
				dst = appendInt32(dst, x.Task.Partition)
				dst = appendInt64(dst, x.OffsetSum)
			}
		}
	}
	return dst
}
