package coordinator

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// appendFailed is the error code a request gets when the records of its
// change could not be appended, as Kafka's runtime maps a failed write:
// NOT_COORDINATOR when the log says this instance no longer owns the
// group's partition (a newer owner fenced its writer; the client finds the
// coordinator again); UNKNOWN_SERVER_ERROR when a record is larger than the
// log accepts (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE: retrying cannot
// help, and Kafka's CoordinatorOperationExceptionHelper answers the same);
// COORDINATOR_NOT_AVAILABLE otherwise (retried here).
func appendFailed(err error) *kerr.Error {
	switch {
	case errors.Is(err, kerr.NotCoordinator):
		return kerr.NotCoordinator
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge):
		return kerr.UnknownServerError
	}
	return kerr.CoordinatorNotAvailable
}
