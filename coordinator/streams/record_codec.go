package streams

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Record encoding for a durable group log (a compacted topic on the upstream
// cluster): the key names what the record overwrites, the value is the
// record's content, and a tombstone has no value. Both are JSON: the log is
// streamshift's own, so readability and forward compatibility matter more
// than size. The durable structs and the rules for changing them are in
// record_values.go.

// ErrUnknownRecordType is UnmarshalRecord's error for a record of a type
// this release does not know: a newer streamshift wrote it. A loader skips
// it (and says so), so a release reads a later one's log.
var ErrUnknownRecordType = errors.New("unknown record type")

// MarshalRecord encodes a record as a log key and value (nil for a
// tombstone).
func MarshalRecord(r Record) (key, value []byte, err error) {
	key, err = json.Marshal(recordKeyV1{V: recordKeyVersion, Type: int16(r.Type), Group: r.GroupID, Member: r.MemberID})
	if err != nil || r.Tombstone() {
		return key, nil, err
	}
	format, known := RecordValueFormats[r.Type]
	var d durableValue
	if known {
		d, known = format.encode(r.Value)
	}
	if !known {
		return nil, nil, fmt.Errorf("marshal %s record: value %T", r.Type, r.Value)
	}
	d.setVersion(format.Version)
	value, err = json.Marshal(d)
	if err != nil {
		return nil, nil, fmt.Errorf("marshal %s record: %w", r.Type, err)
	}
	return key, value, nil
}

// UnmarshalRecord decodes what MarshalRecord encoded, of this release or a
// later one: a value's fields this release does not know are ignored. For a
// type it does not know, the error is ErrUnknownRecordType and the record
// holds the key (type, group, member) for the caller's log line. It never
// panics on bad input (the bytes come back from the network).
func UnmarshalRecord(key, value []byte) (Record, error) {
	var k recordKeyV1
	if err := unmarshalJSON(key, &k); err != nil {
		return Record{}, fmt.Errorf("record key: %w", err)
	}
	if k.V != recordKeyVersion {
		return Record{}, fmt.Errorf("record key: unsupported version %d", k.V)
	}
	r := Record{Type: RecordType(k.Type), GroupID: k.Group, MemberID: k.Member}
	format, known := RecordValueFormats[r.Type]
	if !known {
		return r, fmt.Errorf("record key: %w %d", ErrUnknownRecordType, k.Type)
	}
	// Unlike a value, the key of a known type is strict: it is what
	// compaction keeps one record of, so a field this release does not know
	// would make two records one (a new key is a new type).
	if err := strictUnmarshalJSON(key, &k); err != nil {
		return Record{}, fmt.Errorf("record key: %w", err)
	}
	memberKeyed := r.Type == RecordMemberMetadata || r.Type == RecordTargetAssignmentMember || r.Type == RecordCurrentMemberAssignment
	if memberKeyed != (k.Member != "") {
		return Record{}, fmt.Errorf("record key: %s with member %q", r.Type, k.Member)
	}
	if value == nil {
		return r, nil
	}
	v, err := format.decode(value)
	if err != nil {
		return Record{}, fmt.Errorf("%s record value: %w", r.Type, err)
	}
	r.Value = v
	return r, nil
}
