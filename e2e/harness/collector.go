package harness

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Update is one output record: the count of Key after an input record, as CountApp wrote it.
type Update struct {
	Key       string
	Count     int64
	Partition int32
	Offset    int64
	Arrived   time.Time // when the collector received it (read_committed: after the commit)
}

// Collector reads the output topic from the start, without a group (so it never joins or
// disturbs anything), with read_committed when the run is exactly-once.
type Collector struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	updates []Update
	bad     []error
}

// StartCollector starts consuming topic at bootstrap.
func StartCollector(bootstrap, topic string, readCommitted bool) (*Collector, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200 * time.Millisecond)}
	if readCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("collector: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Collector{cl: cl, cancel: cancel, done: make(chan struct{})}
	go c.loop(ctx)
	return c, nil
}

func (c *Collector) loop(ctx context.Context) {
	defer close(c.done)
	for {
		fs := c.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		now := time.Now()
		var batch []Update
		var bad []error
		fs.EachError(func(t string, p int32, err error) {
			bad = append(bad, fmt.Errorf("fetch %s-%d: %w", t, p, err))
		})
		fs.EachRecord(func(r *kgo.Record) {
			if len(r.Value) != 8 {
				bad = append(bad, fmt.Errorf("output %s-%d@%d: value of %d bytes, want an 8-byte long", r.Topic, r.Partition, r.Offset, len(r.Value)))
				return
			}
			batch = append(batch, Update{Key: string(r.Key), Count: int64(binary.BigEndian.Uint64(r.Value)),
				Partition: r.Partition, Offset: r.Offset, Arrived: now})
		})
		c.mu.Lock()
		c.updates = append(c.updates, batch...)
		c.bad = append(c.bad, bad...)
		c.mu.Unlock()
	}
}

// Updates returns a copy of everything read so far, in arrival order (per partition: offset order).
func (c *Collector) Updates() []Update {
	return copyLocked(&c.mu, &c.updates)
}

// Errors returns fetch and decode errors seen so far.
func (c *Collector) Errors() []error {
	return copyLocked(&c.mu, &c.bad)
}

// Latest is the last count read per key.
func (c *Collector) Latest() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]int64{}
	for _, u := range c.updates {
		m[u.Key] = u.Count
	}
	return m
}

// WaitCaughtUp waits until every key's last count has reached expected (the input is done).
func (c *Collector) WaitCaughtUp(ctx context.Context, expected map[string]int64) error {
	for {
		latest := c.Latest()
		behind := 0
		var example string
		for k, want := range expected {
			if latest[k] < want {
				behind++
				if example == "" {
					example = fmt.Sprintf("%s at %d of %d", k, latest[k], want)
				}
			}
		}
		if behind == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("output not caught up: %d keys behind (e.g. %s): %w", behind, example, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Close stops consuming.
func (c *Collector) Close() {
	c.cancel()
	<-c.done
	c.cl.Close()
}

// copyLocked copies *s under mu: what a reader gets while a goroutine appends.
func copyLocked[T any](mu *sync.Mutex, s *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	return append([]T(nil), *s...)
}
