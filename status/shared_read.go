package status

import (
	"context"
	"errors"
	"sync"
	"time"
)

// One read serves every caller for a second: one of every group (the page,
// /api/groups), one per group id (/api/groups/{id}). Each open page reads
// every group every 2 s, and a read asks the upstream a DescribeGroups of
// the observed classic groups, and an OffsetFetch and a ListOffsets per
// Streams group: with N pages open (or a script polling the API) the
// upstream would be asked N times as often. Callers within the window get
// the latest read; callers during a read wait for it. At most
// maxSharedReads ids are read or kept at once: a script asking for many
// ids gets 503 for the rest instead of as many upstream reads.

// readShareWindow is how long a read is served again.
const readShareWindow = time.Second

// maxSharedReads bounds the ids read or kept at once ("" is every group).
const maxSharedReads = 64

// errTooManyReads answers a read past maxSharedReads.
var errTooManyReads = errors.New("too many group reads at once; try again in a second")

// sharedRead is the latest read of one id, and the one under way.
type sharedRead struct {
	at      time.Time
	gs      []Group
	err     error
	running chan struct{} // closed when the read under way ends
}

// sharedReads are the reads by id, guarded by mu.
type sharedReads struct {
	mu    sync.Mutex
	byID  map[string]*sharedRead
	share time.Duration
}

// readShared is s.groups(id), shared (above). A caller whose context ends
// while it waits gets its context's error.
func (s *Server) readShared(ctx context.Context, id string) ([]Group, error) {
	sr := &s.reads
	sr.mu.Lock()
	sr.forgetOld()
	r := sr.byID[id]
	if r != nil && r.running == nil && time.Since(r.at) < sr.share {
		gs, err := r.gs, r.err
		sr.mu.Unlock()
		return gs, err
	}
	if r == nil {
		if len(sr.byID) >= maxSharedReads {
			sr.mu.Unlock()
			return nil, errTooManyReads
		}
		r = &sharedRead{}
		sr.byID[id] = r
	}
	running := r.running
	if running == nil {
		running = make(chan struct{})
		r.running = running
		go func() {
			// Its own time: the caller that started it may go.
			rctx, cancel := context.WithTimeout(context.Background(), readTimeout)
			gs, err := s.groups(rctx, id)
			cancel()
			sr.mu.Lock()
			r.gs, r.err, r.at, r.running = gs, err, time.Now(), nil
			sr.mu.Unlock()
			close(running)
		}()
	}
	sr.mu.Unlock()
	select {
	case <-running:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	sr.mu.Lock()
	defer sr.mu.Unlock()
	return r.gs, r.err
}

// forgetOld drops the reads past their window that are not under way; mu
// is held.
func (sr *sharedReads) forgetOld() {
	for id, r := range sr.byID {
		if r.running == nil && time.Since(r.at) >= sr.share {
			delete(sr.byID, id)
		}
	}
}
