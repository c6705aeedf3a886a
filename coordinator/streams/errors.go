package streams

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Errors answered to a client carry a Kafka error code: coordError, built
// with errorf. It unwraps to its *kerr.Error, so errors.As finds the code.

// CoordError is an error answered to the client with a Kafka error code.
type CoordError struct {
	Code *kerr.Error
	Msg  string
}

func (e *CoordError) Error() string { return e.Code.Message + ": " + e.Msg }

// Unwrap gives the Kafka error, so that callers taking a plain error (and
// errors.As to *kerr.Error) read the code.
func (e *CoordError) Unwrap() error { return e.Code }

func Errorf(code *kerr.Error, format string, args ...any) *CoordError {
	return &CoordError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// asCoordError is the coordError in err's chain, or err as an
// UNKNOWN_SERVER_ERROR.
func asCoordError(err error) *CoordError {
	var ce *CoordError
	if !errors.As(err, &ce) {
		ce = Errorf(kerr.UnknownServerError, "%v", err)
	}
	return ce
}

// ErrClassicNotServed is the answer to a classic request for a group the
// coordinator does not serve as a streams group (unknown, or without a
// topology yet): the caller forwards the request upstream.
var ErrClassicNotServed = errors.New("the group is not a streams group served here")
