package classicstreams

import (
	"errors"
	"fmt"
)

// Sentinel causes of a DecodeError; test with errors.Is.
var (
	// ErrTruncated: the input ends inside a field.
	ErrTruncated = errors.New("truncated")
	// ErrNegativeLength: a length or count is negative where Java never
	// writes one (null is only legal in nullable fields).
	ErrNegativeLength = errors.New("negative length")
	// ErrLengthTooLarge: a length or count promises more than the bytes left.
	ErrLengthTooLarge = errors.New("length exceeds remaining bytes")
	// ErrUnknownVersion: a version this package cannot read (below 1, or an
	// AssignmentInfo above LatestSupportedVersion, which Java rejects too).
	ErrUnknownVersion = errors.New("unknown version")
	// ErrUnknownTopicIndex: an AssignmentInfo host map names a topic index
	// missing from the topic dictionary.
	ErrUnknownTopicIndex = errors.New("topic index not in dictionary")
	// ErrBadString: a string is not valid (modified) UTF-8.
	ErrBadString = errors.New("invalid string encoding")
)

// DecodeError says what could not be decoded and where.
type DecodeError struct {
	// Payload is what was being decoded, e.g. "SubscriptionInfo".
	Payload string
	// Field is the field being read when decoding failed.
	Field string
	// Offset is the byte offset, from the start of the payload, of the field
	// that failed.
	Offset int
	// Err is the cause, one of the Err* sentinels.
	Err error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("decode %s: %s at byte offset %d: %v", e.Payload, e.Field, e.Offset, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// EncodeError says why a value cannot be encoded at the requested version.
type EncodeError struct {
	Payload string
	Reason  string
}

func (e *EncodeError) Error() string {
	return fmt.Sprintf("encode %s: %s", e.Payload, e.Reason)
}

func encodeErr(payload, format string, args ...any) error {
	return &EncodeError{Payload: payload, Reason: fmt.Sprintf(format, args...)}
}
