// Package testlog is the tests' log sink: a buffer a logger writes from
// other goroutines (event loops, a link, serve) while the test reads it.
// Only tests import it (imports_test.go).
package testlog

import (
	"bytes"
	"sync"
)

// Buffer is safe for one logger's writes and the test's reads at once.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *Buffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// String is everything written so far.
func (w *Buffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
