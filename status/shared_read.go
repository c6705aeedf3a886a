package status

import (
	"context"
	"sync"
	"time"
)

// One read of every group serves every caller for a second. Each open
// page reads them every 2 s, and a read asks the upstream a DescribeGroups
// of the observed classic groups, and an OffsetFetch and a ListOffsets per
// Streams group: with N pages open (or a script polling /api/groups) the
// upstream would be asked N times as often. Callers within the window get
// the latest read; callers during a read wait for it.

// readShareWindow is how long a read of every group is served again.
const readShareWindow = time.Second

// sharedRead is the latest read of every group, and the one under way.
type sharedRead struct {
	mu      sync.Mutex
	at      time.Time
	gs      []Group
	err     error
	running chan struct{} // closed when the read under way ends
}

// readAll is s.groups of every group, shared (above). A caller whose
// context ends while it waits gets its context's error.
func (s *Server) readAll(ctx context.Context) ([]Group, error) {
	sr := &s.all
	sr.mu.Lock()
	if !sr.at.IsZero() && time.Since(sr.at) < s.readShare {
		gs, err := sr.gs, sr.err
		sr.mu.Unlock()
		return gs, err
	}
	running := sr.running
	if running == nil {
		running = make(chan struct{})
		sr.running = running
		go func() {
			// Its own time: the caller that started it may go.
			rctx, cancel := context.WithTimeout(context.Background(), readTimeout)
			gs, err := s.groups(rctx, "")
			cancel()
			sr.mu.Lock()
			sr.gs, sr.err, sr.at, sr.running = gs, err, time.Now(), nil
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
	return sr.gs, sr.err
}
