// Package reload keeps a value built from files (TLS certificates, keys,
// CA bundles) current: it is rebuilt when one of the files changes, so a
// renewed certificate is used without a restart (cert-manager and the like
// replace the files in place). The proxy's listener TLS and the upstream
// TLS share it.
//
// It owns the files' watch and the rebuilt value; what the value is (a
// tls.Config, a CA pool) and when it is used are the caller's. It starts
// no goroutine: the check runs on use, at most once a second.
package reload

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// CheckEvery bounds how often the files are stat'ed: at most once a second,
// on use.
const CheckEvery = time.Second

// Files holds the value built from files and rebuilds it on change.
type Files[T any] struct {
	names []string
	build func() (T, error)
	// reloaded is told of every rebuild after the first, or of its error
	// (the old value stays).
	reloaded func(error)
	every    time.Duration

	checked atomic.Int64 // unix nanos of the last stat
	mu      sync.Mutex
	stamp   string // sizes and mtimes the current value was built from
	cur     atomic.Pointer[T]
}

// New builds the value from the files once (an error is returned as it is)
// and returns the holder. Empty names are skipped. reloaded, if not nil, is
// told of every later rebuild (nil) or failed rebuild (the error).
func New[T any](names []string, build func() (T, error), reloaded func(error)) (*Files[T], error) {
	f := &Files[T]{build: build, reloaded: reloaded, every: CheckEvery}
	for _, n := range names {
		if n != "" {
			f.names = append(f.names, n)
		}
	}
	stamp, err := f.stampFiles()
	if err != nil {
		return nil, err
	}
	v, err := build()
	if err != nil {
		return nil, err
	}
	f.stamp = stamp
	f.cur.Store(&v)
	f.checked.Store(time.Now().UnixNano())
	return f, nil
}

// Get returns the current value, rebuilt first when a file changed since
// the last check (checked at most every CheckEvery).
func (f *Files[T]) Get() T {
	f.maybeReload()
	return *f.cur.Load()
}

func (f *Files[T]) maybeReload() {
	now := time.Now().UnixNano()
	last := f.checked.Load()
	if now-last < int64(f.every) || !f.checked.CompareAndSwap(last, now) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	stamp, err := f.stampFiles()
	if err != nil {
		f.tell(fmt.Errorf("files unreadable, keeping what was loaded before: %w", err))
		return
	}
	if stamp == f.stamp {
		return
	}
	v, err := f.build()
	if err != nil {
		// A renewal writing the certificate and the key one after the
		// other is seen half done: the next check tries again.
		f.tell(fmt.Errorf("files changed but do not load, keeping what was loaded before: %w", err))
		return
	}
	f.stamp = stamp
	f.cur.Store(&v)
	f.tell(nil)
}

func (f *Files[T]) tell(err error) {
	if f.reloaded != nil {
		f.reloaded(err)
	}
}

func (f *Files[T]) stampFiles() (string, error) {
	stamp := ""
	for _, name := range f.names {
		st, err := os.Stat(name)
		if err != nil {
			return "", err
		}
		stamp += fmt.Sprintf("%s:%d:%d;", name, st.Size(), st.ModTime().UnixNano())
	}
	return stamp, nil
}
