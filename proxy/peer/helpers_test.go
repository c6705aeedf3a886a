package peer

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// newCluster is a kfake cluster closed when the test ends.
func newCluster(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// waitFor polls fn until it returns nil, for at most 20 seconds.
func waitFor(t testing.TB, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = fn(); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: %v", what, err)
}

var errNotYet = errors.New("not yet")
