package capture

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/migration"
)

// Line is one line of a capture file: an exchange (a request and its
// response as the client saw them) or an event (what the coordinator or the
// migration did, and why). Field names follow Kafka's request logger and
// JSON converters.
type Line struct {
	// Type is "exchange", "event", "connection" (a client connection that
	// carried a member's request opened or closed: Event says which) or
	// "header" (the first line of each file since format 2).
	Type string `json:"type"`
	// Format is the capture format of a header line (FormatVersion).
	Format int       `json:"format,omitempty"`
	Wall   time.Time `json:"wall"`
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

// failure says whether an event makes the group's flight recorder dump:
// what an operator must act on (a takeover or hand-back that failed, a
// member fenced by its rebalance timeout, a classic join or sync timeout,
// a session that expired while its connection stayed open or unknown),
// and a designed fence only when asked (onDesigned:
// capture.flight-on-designed-fence).
func (e *Event) failure(onDesigned bool) bool {
	switch e.Kind {
	case migration.EventTakeoverFailed, migration.EventHandBackFailed:
		return true
	case streams.EventMemberFenced, streams.EventMemberReplaced:
		return onDesigned || !e.designedFence()
	}
	return false
}

// designedFence: the end of a member streamshift removes by design in a
// rolling step, not a fault. A member replaced by identity (its process
// came back under the other protocol); a fencing by disconnect expiry (its
// connection closed and it sent nothing since: a stopped stateless
// instance); a session expiry of a member whose connection was closed (a
// stopped instance, without the disconnect expiry). A session expiry with
// the connection open or unknown (an older capture has no connection
// field) is a live client that stopped heartbeating: not designed.
func (e *Event) designedFence() bool {
	switch e.Kind {
	case streams.EventMemberReplaced:
		return true
	case streams.EventMemberFenced:
		if strings.HasPrefix(e.Reason, streams.DisconnectExpiredReason) {
			return true
		}
		conn, _ := e.Fields[streams.FieldConnection].(string)
		return e.Reason == streams.SessionExpiredReason && conn == streams.ConnClosed
	}
	return false
}
