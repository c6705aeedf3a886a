package peer

import "sync"

// budget bounds the calls of one kind on one link: how many, and
// their request bytes.
type budget struct {
	mu              sync.Mutex
	n, max          int
	bytes, maxBytes int64
}

// take reserves room for a call of size bytes; it returns the reason it
// cannot, "" when it did.
func (b *budget) take(size int64) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n >= b.max {
		return "inflight"
	}
	if b.bytes+size > b.maxBytes {
		return "bytes"
	}
	b.n++
	b.bytes += size
	return ""
}

func (b *budget) give(size int64) {
	b.mu.Lock()
	b.n--
	b.bytes -= size
	b.mu.Unlock()
}

func (b *budget) inflight() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}
