package streams

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka 4.4 puts no explicit bound on a streams heartbeat's strings or its
// topology: what bounds them is the record the coordinator writes to
// __consumer_offsets. A group or member id goes into a record key, whose
// strings are int16-prefixed (the key schemas are not flexible), so one over
// 32767 bytes fails to serialize; a topology is one StreamsGroupTopology
// record and a member's metadata (instance id, rack, client id and host,
// process id, user endpoint, client tags) one StreamsGroupMemberMetadata
// record, each a batch of its own that the log refuses once it exceeds the
// topic's max.message.bytes (the broker's message.max.bytes, 1048588 by
// default, which __consumer_offsets takes). Kafka's runtime maps all of these
// append failures (a serialization RuntimeException, MESSAGE_TOO_LARGE,
// RECORD_LIST_TOO_LARGE) to UNKNOWN_SERVER_ERROR, and the Java client treats
// that as fatal. streamshift refuses the same heartbeats with the same code,
// but before it does any work for them (topology configuration, assignment,
// upstream I/O), by summing lengths in Kafka's record encoding rather than
// encoding, and with a message saying which bound was crossed.

// MaxRecordBytes is Kafka's default message.max.bytes: the largest record
// batch __consumer_offsets accepts.
const MaxRecordBytes = 1048588

// MaxKeyStringBytes is the longest string a coordinator record key holds
// (an int16 length prefix).
const MaxKeyStringBytes = 0x7fff

// recordBatchOverhead is a record batch's header (v2): what the log counts
// besides the record itself.
const recordBatchOverhead = 61

// uvarintLen is the size of v as an unsigned varint.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// varintLen is the size of v as a zig-zag varint (a record's lengths).
func varintLen(v int) int { return uvarintLen(uint64(v) << 1) }

// batchBytes is the size of a batch holding one record of a key and a value
// of these sizes: what Kafka compares with max.message.bytes.
func batchBytes(key, value int) int {
	// attributes, timestamp delta 0, offset delta 0, key, value, no headers
	body := 1 + 1 + 1 + varintLen(key) + key + varintLen(value) + value + 1
	return recordBatchOverhead + varintLen(body) + body
}

// compactString is a flexible-version string's size.
func compactString(s string) int { return uvarintLen(uint64(len(s))+1) + len(s) }

// compactArray is a flexible-version array's length prefix.
func compactArray(n int) int { return uvarintLen(uint64(n) + 1) }

func compactStrings(ss []string) int {
	n := compactArray(len(ss))
	for _, s := range ss {
		n += compactString(s)
	}
	return n
}

func compactInt16s(v []int16) int { return compactArray(len(v)) + 2*len(v) }

// topicInfoBytes is a StreamsGroupTopologyValue.TopicInfo array's size.
func topicInfoBytes(ts []kmsg.TopicInfo) int {
	n := compactArray(len(ts))
	for _, t := range ts {
		n += compactString(t.Topic) + 4 + 2 + compactArray(len(t.Configs)) + 1
		for _, c := range t.Configs {
			n += compactString(c.Key) + compactString(c.Value) + 1
		}
	}
	return n
}

// topologyRecordBytes is the batch size of the StreamsGroupTopology record
// of the request's topology.
func topologyRecordBytes(group string, t *kmsg.StreamsGroupHeartbeatRequestTopology) int {
	value := 2 + 4 + compactArray(len(t.Subtopologies)) + 1 // version, epoch, subtopologies, tags
	for i := range t.Subtopologies {
		s := &t.Subtopologies[i]
		value += compactString(s.SubtopologyID) + compactStrings(s.SourceTopics) + compactStrings(s.SourceTopicRegex) +
			topicInfoBytes(s.StateChangelogTopics) + compactStrings(s.RepartitionSinkTopics) +
			topicInfoBytes(s.RepartitionSourceTopics) + compactArray(len(s.CopartitionGroups)) + 1
		for _, c := range s.CopartitionGroups {
			value += compactInt16s(c.SourceTopics) + compactInt16s(c.SourceTopicRegex) + compactInt16s(c.RepartitionSourceTopics) + 1
		}
	}
	return batchBytes(2+2+len(group), value)
}

// memberRecordBytes is the batch size of a StreamsGroupMemberMetadata
// record.
func memberRecordBytes(group, member string, v *MemberMetadataValue) int {
	value := 2 + compactString(v.InstanceID) + compactString(v.RackID) + compactString(v.ClientID) +
		compactString(v.ClientHost) + 4 + 4 + compactString(v.ProcessID) + 1 + compactArray(len(v.ClientTags)) + 1
	if e := v.UserEndpoint; e != nil {
		value += compactString(e.Host) + 2 + 1
	}
	for _, t := range v.ClientTags {
		value += compactString(t.Key) + compactString(t.Value) + 1
	}
	return batchBytes(2+2+len(group)+2+len(member), value)
}

// requestMemberRecordBytes is memberRecordBytes of what the request itself
// carries (its null fields count as empty): a lower bound of the record its
// member gets, checked before the group is read.
func requestMemberRecordBytes(req *kmsg.StreamsGroupHeartbeatRequest) int {
	v := MemberMetadataValue{}
	if req.InstanceID != nil {
		v.InstanceID = *req.InstanceID
	}
	if req.RackID != nil {
		v.RackID = *req.RackID
	}
	if req.ProcessID != nil {
		v.ProcessID = *req.ProcessID
	}
	if e := req.UserEndpoint; e != nil {
		v.UserEndpoint = &Endpoint{Host: e.Host, Port: e.Port}
	}
	n := memberRecordBytes(req.Group, req.MemberID, &v)
	for _, t := range req.ClientTags {
		n += compactString(t.Key) + compactString(t.Value) + 1
	}
	return n
}

// tooLarge is the answer to a heartbeat whose record Kafka's log would
// refuse: UNKNOWN_SERVER_ERROR, Kafka's mapping of MESSAGE_TOO_LARGE.
func tooLarge(format string, args ...any) *CoordError {
	return Errorf(kerr.UnknownServerError, format, args...)
}

// checkRecordBounds refuses a heartbeat whose group id, member id, member
// metadata or topology would not fit the record Kafka writes for it.
func checkRecordBounds(req *kmsg.StreamsGroupHeartbeatRequest) *CoordError {
	if len(req.Group) > MaxKeyStringBytes {
		return tooLarge("GroupId is %d bytes; a group id must be at most %d bytes (it is a string of the group's record keys).", len(req.Group), MaxKeyStringBytes)
	}
	if len(req.MemberID) > MaxKeyStringBytes {
		return tooLarge("MemberId is %d bytes; a member id must be at most %d bytes (it is a string of the member's record keys).", len(req.MemberID), MaxKeyStringBytes)
	}
	if n := requestMemberRecordBytes(req); n > MaxRecordBytes {
		return memberTooLarge(req.MemberID, n)
	}
	if t := req.Topology; t != nil {
		if n := topologyRecordBytes(req.Group, t); n > MaxRecordBytes {
			return tooLarge("The topology of group %s (%d subtopologies) makes a StreamsGroupTopology record of %d bytes, larger than the maximum record size of %d bytes.",
				req.Group, len(t.Subtopologies), n, MaxRecordBytes)
		}
	}
	return nil
}

func memberTooLarge(memberID string, n int) *CoordError {
	return tooLarge("The metadata of member %s (instance id, rack id, client id and host, process id, user endpoint, client tags) makes a StreamsGroupMemberMetadata record of %d bytes, larger than the maximum record size of %d bytes.",
		memberID, n, MaxRecordBytes)
}

// checkMemberRecord refuses member metadata, as the heartbeat merged it
// with what the member had, that would not fit its record.
func checkMemberRecord(group, member string, v *MemberMetadataValue) *CoordError {
	if v == nil || v.Classic != nil {
		// A classic member's record also holds its JoinGroup protocols,
		// bounded on the classic path.
		return nil
	}
	if n := memberRecordBytes(group, member, v); n > MaxRecordBytes {
		return memberTooLarge(member, n)
	}
	return nil
}
