package coordinator

import (
	"sync"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// Log is the group log: the coordinator appends the records of one group's
// state change and answers only once Append returned nil. An in-memory log
// serves now; a durable log (on the upstream cluster) implements the same.
type Log interface {
	// Append appends records of one group, in order, atomically.
	Append(groupID string, records []streams.Record) error
	// Load returns the live records of one group in log order, for rebuilding
	// its state after a failed append.
	Load(groupID string) ([]streams.Record, error)
}

// MemoryLog is a Log in memory. Like the compacted __consumer_offsets topic it
// keeps only the latest record per key, in the order they were appended, so
// replaying it gives the same state as replaying everything.
type MemoryLog struct {
	mu     sync.Mutex
	groups map[string]*groupLog
	// appended counts every record ever appended (tests look at batches).
	appended int
}

type groupLog struct {
	records []streams.Record
	live    []bool
	index   map[streams.RecordKey]int
	dead    int
}

// NewMemoryLog returns an empty in-memory log.
func NewMemoryLog() *MemoryLog {
	return &MemoryLog{groups: map[string]*groupLog{}}
}

func (l *MemoryLog) Append(groupID string, records []streams.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	gl := l.groups[groupID]
	if gl == nil {
		gl = &groupLog{index: map[streams.RecordKey]int{}}
		l.groups[groupID] = gl
	}
	for _, r := range records {
		k := r.Key()
		if i, ok := gl.index[k]; ok {
			gl.live[i] = false
			gl.dead++
			delete(gl.index, k)
		}
		if r.Tombstone() {
			// Nothing older than the tombstone is left for this key, and an
			// absent key replays like a deleted one.
			continue
		}
		gl.index[k] = len(gl.records)
		gl.records = append(gl.records, r)
		gl.live = append(gl.live, true)
	}
	l.appended += len(records)
	if gl.dead > 64 && gl.dead > len(gl.records)/2 {
		gl.compact()
	}
	if len(gl.index) == 0 {
		delete(l.groups, groupID)
	}
	return nil
}

func (gl *groupLog) compact() {
	recs := make([]streams.Record, 0, len(gl.records)-gl.dead)
	for i, r := range gl.records {
		if gl.live[i] {
			recs = append(recs, r)
		}
	}
	gl.records = recs
	gl.live = make([]bool, len(recs))
	gl.index = make(map[streams.RecordKey]int, len(recs))
	for i, r := range recs {
		gl.live[i] = true
		gl.index[r.Key()] = i
	}
	gl.dead = 0
}

func (l *MemoryLog) Load(groupID string) ([]streams.Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	gl := l.groups[groupID]
	if gl == nil {
		return nil, nil
	}
	out := make([]streams.Record, 0, len(gl.records)-gl.dead)
	for i, r := range gl.records {
		if gl.live[i] {
			out = append(out, r)
		}
	}
	return out, nil
}

// All returns the live records of every group, grouped by group.
func (l *MemoryLog) All() []streams.Record {
	l.mu.Lock()
	ids := make([]string, 0, len(l.groups))
	for id := range l.groups {
		ids = append(ids, id)
	}
	l.mu.Unlock()
	var out []streams.Record
	for _, id := range ids {
		recs, _ := l.Load(id)
		out = append(out, recs...)
	}
	return out
}
