package coordinator

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Errors answered to a client carry a Kafka error code: coordError, built
// with errorf. It unwraps to its *kerr.Error, so errors.As finds the code.

// coordError is an error answered to the client with a Kafka error code.
type coordError struct {
	code *kerr.Error
	msg  string
}

func (e *coordError) Error() string { return e.code.Message + ": " + e.msg }

// Unwrap gives the Kafka error, so that callers taking a plain error (and
// errors.As to *kerr.Error) read the code.
func (e *coordError) Unwrap() error { return e.code }

func errorf(code *kerr.Error, format string, args ...any) *coordError {
	return &coordError{code: code, msg: fmt.Sprintf(format, args...)}
}

// asCoordError is the coordError in err's chain, or err as an
// UNKNOWN_SERVER_ERROR.
func asCoordError(err error) *coordError {
	var ce *coordError
	if !errors.As(err, &ce) {
		ce = errorf(kerr.UnknownServerError, "%v", err)
	}
	return ce
}
