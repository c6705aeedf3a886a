package peer

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/streamshift/streamshift/internal/testwait"
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

// waitFor polls fn until it returns nil (internal/testwait).
func waitFor(t testing.TB, what string, fn func() error) {
	t.Helper()
	testwait.For(t, what, fn)
}

var errNotYet = testwait.ErrNotYet
