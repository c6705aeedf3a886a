package capture

import (
	"encoding/json"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/migration"
)

// Line is one line of a capture file: an exchange (a request and its
// response as the client saw them) or an event (what the coordinator or the
// migration did, and why). Field names follow Kafka's request logger and
// JSON converters.
type Line struct {
	// Type is "exchange" or "event".
	Type string    `json:"type"`
	Wall time.Time `json:"wall"`
	// MonoNs is the monotonic time since the capturing process started,
	// for ordering lines the wall clock may reorder (it can step).
	MonoNs   int64  `json:"monoNs"`
	Instance string `json:"instance,omitempty"`

	ConnID                uint64  `json:"connId,omitempty"`
	ClientAddress         string  `json:"clientAddress,omitempty"`
	ClientID              string  `json:"clientId,omitempty"`
	ClientSoftwareName    string  `json:"clientSoftwareName,omitempty"`
	ClientSoftwareVersion string  `json:"clientSoftwareVersion,omitempty"`
	APIKey                *int16  `json:"apiKey,omitempty"`
	APIName               string  `json:"apiName,omitempty"`
	APIVersion            int16   `json:"apiVersion,omitempty"`
	CorrelationID         int32   `json:"correlationId,omitempty"`
	LatencyMs             float64 `json:"latencyMs,omitempty"`
	// Local: the proxy answered (the streams-group coordinator or the
	// migration); false: the upstream's answer passed through.
	Local      bool            `json:"local,omitempty"`
	Groups     []string        `json:"groups,omitempty"`
	ErrorCodes []int16         `json:"errorCodes,omitempty"`
	Errors     []string        `json:"errors,omitempty"`
	Request    json.RawMessage `json:"request,omitempty"`
	Response   json.RawMessage `json:"response,omitempty"`
	// DecodeError says why a body could not be decoded (its bytes were
	// not what its version says).
	DecodeError string `json:"decodeError,omitempty"`

	// Event is the kind of an event line (see Event.Kind).
	Event   string         `json:"event,omitempty"`
	Group   string         `json:"group,omitempty"`
	Member  string         `json:"memberId,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Fields  map[string]any `json:"fields,omitempty"`
	Message string         `json:"message,omitempty"`
}

// An event's kind is its emitter's: coordinator/streams' Event* (epoch
// bumps, fencings, target assignments), coordinator.EventRecordsWritten and
// migration's Event* (the phases of a takeover or a hand-back). The
// capture names them by those constants, so that it cannot drift from what
// it records.

// Event is what the coordinator or the migration tells the recorder.
type Event struct {
	Kind    string
	Group   string
	Member  string
	Reason  string
	Fields  map[string]any
	Message string
	// At defaults to when the recorder is told.
	At time.Time
}

// failure says whether an event makes the group's flight recorder dump.
func (e *Event) failure() bool {
	switch e.Kind {
	case migration.EventTakeoverFailed, migration.EventHandBackFailed, streams.EventMemberFenced:
		return true
	}
	return false
}
