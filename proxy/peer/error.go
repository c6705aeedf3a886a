package peer

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Error is a call that got no answer from the peer's handler: refused
// at once, timed out, its link lost, or answered with an envelope error.
type Error struct {
	Peer string
	// Code is the envelope error code, or COORDINATOR_NOT_AVAILABLE for
	// what this side decided (busy, link down or lost, timeout): what the
	// origin answers the client. A call that failed is never resent.
	Code int16
	// Result is what this side decided (Refused, LinkDown,
	// Timeout); "" for the peer's envelope error.
	Result string
	Reason string
}

// The results of a call (Result) that this side decided, beside
// OK and the peer's envelope error codes.
const (
	OK = "ok"
	// Refused: beyond a bound, refused at once, nothing sent.
	Refused = "refused"
	// LinkDown: the link was down, or was lost with the call on it.
	LinkDown = "link_down"
	// Timeout: no answer within the call's time.
	Timeout = "timeout"
	// Rerouted: the peer answered envelope NOT_COORDINATOR, nothing
	// done (the origin may send it to the next owner).
	Rerouted = "rerouted"
)

// Result names a call's end for metrics, from a bounded set: ok,
// refused, link_down, timeout, rerouted (envelope NOT_COORDINATOR), or the
// Kafka name of the peer's envelope error code (an unknown code is
// UNKNOWN_SERVER_ERROR).
func Result(err error) string {
	if err == nil {
		return OK
	}
	var pe *Error
	if !errors.As(err, &pe) {
		return kerr.CoordinatorNotAvailable.Message
	}
	if pe.Result != "" {
		return pe.Result
	}
	return codeResult(pe.Code)
}

// codeResult names an envelope error code as Result does.
func codeResult(code int16) string {
	switch code {
	case 0:
		return OK
	case kerr.NotCoordinator.Code:
		return Rerouted
	}
	return kerr.TypedErrorForCode(code).Message
}

func (e *Error) Error() string {
	return fmt.Sprintf("call to streamshift instance %q: %s (%s)", e.Peer, e.Reason, kerr.ErrorForCode(e.Code))
}

// ErrorCode is the Kafka error code of a failed call, 0 for nil; an
// error that is not an Error is COORDINATOR_NOT_AVAILABLE.
func ErrorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return kerr.CoordinatorNotAvailable.Code
}
