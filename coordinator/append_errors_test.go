package coordinator

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A record the log refuses as too large is Kafka's UNKNOWN_SERVER_ERROR,
// never a retriable code the client would retry forever.
func TestAppendFailed(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want *kerr.Error
	}{
		{fmt.Errorf("group log: %w", kerr.MessageTooLarge), kerr.UnknownServerError},
		{fmt.Errorf("group log: %w", kerr.RecordListTooLarge), kerr.UnknownServerError},
		{fmt.Errorf("fenced: %w", kerr.NotCoordinator), kerr.NotCoordinator},
		{fmt.Errorf("group log: %w", kerr.RequestTimedOut), kerr.CoordinatorNotAvailable},
	} {
		if got := appendFailed(tc.err); got != tc.want {
			t.Errorf("appendFailed(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
