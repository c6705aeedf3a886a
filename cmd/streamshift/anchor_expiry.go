package main

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// expiredAnchors makes the anchor members of expired streams groups leave
// their upstream groups (coordinator.Options.OnGroupExpired), so the
// upstream's own Empty-group offset retention applies, as for a Kafka
// streams group. The coordinator tells it on a group's executor, which must
// not wait for I/O: the leaves queue here and run one at a time on a
// goroutine that exists only while the queue is not empty.
type expiredAnchors struct {
	// leave makes the group's anchor leave (anchor.Manager.Leave).
	leave func(ctx context.Context, group string) error
	// served reports whether the group is served again (a member joined
	// after it expired): its anchor is the new group's then.
	served  func(group string) bool
	timeout time.Duration
	log     zerolog.Logger
	// count, if set, counts the expired groups.
	count prometheus.Counter

	mu      sync.Mutex
	queue   []string
	running bool
}

// expired queues the group's anchor leave; it never blocks.
func (e *expiredAnchors) expired(group string) {
	if e.count != nil {
		e.count.Inc()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.queue = append(e.queue, group)
	if !e.running {
		e.running = true
		go e.drain()
	}
}

func (e *expiredAnchors) drain() {
	for {
		e.mu.Lock()
		if len(e.queue) == 0 {
			e.running = false
			e.queue = nil
			e.mu.Unlock()
			return
		}
		group := e.queue[0]
		e.queue = e.queue[1:]
		e.mu.Unlock()
		if e.served(group) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
		err := e.leave(ctx, group)
		cancel()
		if err != nil {
			// The upstream still sees the anchor until its session times
			// out: the offsets' retention starts then.
			e.log.Warn().Err(err).Str("group", group).Msg("the anchor member of an expired streams group could not leave the upstream group")
			continue
		}
		e.log.Info().Str("group", group).Msg("the anchor member of an expired streams group left the upstream group")
	}
}
