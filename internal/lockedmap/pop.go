// Package lockedmap holds what the runtimes do the same way with a map a
// mutex guards.
// It owns no map and no lock: the caller passes both, and stops what it
// popped outside the lock.
package lockedmap

import "sync"

// Pop removes key's entry from m while holding mu and returns what it held
// (the zero value when it held nothing), so that the caller stops it
// (cancels a load, stops an anchor, closes a producer) outside the lock:
// stopping may wait for work that itself takes mu. m must not be
// reassigned while others use it.
func Pop[K comparable, V any](mu *sync.Mutex, m map[K]V, key K) V {
	mu.Lock()
	defer mu.Unlock()
	v := m[key]
	delete(m, key)
	return v
}
