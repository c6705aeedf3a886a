// Package testwait is the tests' wait for a condition that comes about on
// other goroutines (a link up, calls held, a connection closed): it polls
// rather than sleeps a guess. Only tests import it (imports_test.go).
package testwait

import (
	"errors"
	"testing"
	"time"
)

// ErrNotYet is what a condition returns while it does not hold and has
// nothing better to say.
var ErrNotYet = errors.New("not yet")

// For polls fn every 20 ms until it returns nil, and fails the test with
// what and fn's last error if that takes beyond 20 seconds.
func For(t testing.TB, what string, fn func() error) {
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
