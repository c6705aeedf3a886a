package topology

import (
	"fmt"
	"strings"
)

// Heartbeat status codes (StreamsGroupHeartbeatResponse.Status) that a
// topology configuration can end in. Kafka reports these as a status on an
// otherwise successful heartbeat, and the group stays NotReady.
const (
	StatusMissingSourceTopics          int8 = 1
	StatusIncorrectlyPartitionedTopics int8 = 2
	StatusMissingInternalTopics        int8 = 3
)

// Kafka error codes a topology can make a heartbeat fail with.
const (
	ErrUnknownServerError     int16 = -1
	ErrInvalidRequest         int16 = 42
	ErrStreamsInvalidTopology int16 = 130
)

// Error is why a topology is not ready. Exactly one of Status and ErrorCode
// is set:
//   - Status (1..3) mirrors Kafka's TopicConfigurationException: the
//     heartbeat succeeds and carries the status with Message as its detail;
//   - ErrorCode mirrors an exception that fails the whole heartbeat
//     (StreamsInvalidTopologyException → STREAMS_INVALID_TOPOLOGY,
//     InvalidRequestException → INVALID_REQUEST, and Kafka's internal
//     IllegalStateExceptions → UNKNOWN_SERVER_ERROR), with Message as the
//     response's ErrorMessage.
type Error struct {
	Status    int8
	ErrorCode int16
	Message   string
}

func (e *Error) Error() string {
	if e.IsStatus() {
		return fmt.Sprintf("topology status %s: %s", statusName(e.Status), e.Message)
	}
	return fmt.Sprintf("topology error %s: %s", errorName(e.ErrorCode), e.Message)
}

// IsStatus reports whether the error is reported as a heartbeat status
// rather than as a heartbeat error code.
func (e *Error) IsStatus() bool { return e != nil && e.Status != 0 }

func statusName(s int8) string {
	switch s {
	case StatusMissingSourceTopics:
		return "MISSING_SOURCE_TOPICS"
	case StatusIncorrectlyPartitionedTopics:
		return "INCORRECTLY_PARTITIONED_TOPICS"
	case StatusMissingInternalTopics:
		return "MISSING_INTERNAL_TOPICS"
	}
	return fmt.Sprintf("status(%d)", s)
}

func errorName(c int16) string {
	switch c {
	case ErrUnknownServerError:
		return "UNKNOWN_SERVER_ERROR"
	case ErrInvalidRequest:
		return "INVALID_REQUEST"
	case ErrStreamsInvalidTopology:
		return "STREAMS_INVALID_TOPOLOGY"
	}
	return fmt.Sprintf("error(%d)", c)
}

// statusError is a topology that cannot be configured yet: the group's
// heartbeats carry the status, not an error.
func statusError(status int8, msg string) *Error {
	return &Error{Status: status, Message: msg}
}

func invalidTopology(msg string) *Error {
	return &Error{ErrorCode: ErrStreamsInvalidTopology, Message: msg}
}

func invalidRequest(msg string) *Error {
	return &Error{ErrorCode: ErrInvalidRequest, Message: msg}
}

// illegalState stands for the IllegalStateExceptions Kafka throws on paths
// its earlier checks make unreachable; a client would see them as
// UNKNOWN_SERVER_ERROR.
func illegalState(msg string) *Error {
	return &Error{ErrorCode: ErrUnknownServerError, Message: msg}
}

// summarizeTopics formats topic names as Kafka's InternalTopicManager does:
// at most three names, then "and N additional topics".
func summarizeTopics(topics []string) string {
	if len(topics) == 0 {
		return "<none>"
	}
	const maxToShow = 3
	if len(topics) <= maxToShow {
		return strings.Join(topics, ", ")
	}
	return strings.Join(topics[:maxToShow], ", ") +
		fmt.Sprintf(" and %d additional topics", len(topics)-maxToShow)
}

// javaMap formats a name→count map the way Java prints a TreeMap, e.g.
// "{a=1, b=2}"; Kafka embeds such maps in its copartitioning messages.
func javaMap(names []string, counts map[string]int32) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%d", n, counts[n])
	}
	b.WriteByte('}')
	return b.String()
}
