//go:build e2e

package e2e_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The overload test's watchers: the proxy's memory, sampled, and the good
// clients that run through every attack.

// rssWatch samples a process's VmRSS every 100 ms and keeps the peak since
// the last reset. A process above kill bytes is killed (SIGKILL): the
// machine is shared, and an unbounded proxy would take it down.
type rssWatch struct {
	pid    func() int // the proxy's current PID (it changes on a restart)
	kill   int64
	peak   atomic.Int64
	killed atomic.Int64 // the RSS it was killed at, 0: not killed
	stop   chan struct{}
	done   chan struct{}
}

func watchRSS(pid func() int, kill int64) *rssWatch {
	w := &rssWatch{pid: pid, kill: kill, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss, err := procStatusBytes(w.pid(), "VmRSS:"); err == nil {
				if rss > w.peak.Load() {
					w.peak.Store(rss)
				}
				if rss > w.kill {
					_ = syscall.Kill(w.pid(), syscall.SIGKILL)
					w.killed.Store(rss)
				}
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// reset starts a new peak: the sampled one and the kernel's VmHWM (writing
// 5 to clear_refs resets it; a kernel that refuses leaves VmHWM since start).
func (w *rssWatch) reset() {
	w.peak.Store(0)
	w.killed.Store(0)
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", w.pid()), []byte("5"), 0)
}

// peakBytes is the larger of the sampled peak and VmHWM since reset.
func (w *rssWatch) peakBytes() int64 {
	p := w.peak.Load()
	if hwm, err := procStatusBytes(w.pid(), "VmHWM:"); err == nil {
		p = max(p, hwm)
	}
	return max(p, w.killed.Load())
}

func (w *rssWatch) close() { close(w.stop); <-w.done }

// procStatusBytes reads one "kB" field of /proc/<pid>/status in bytes.
func procStatusBytes(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), field); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kib << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// goodClients are a franz-go producer (a record every 5 ms, each one's
// latency kept) and a consumer group on one topic through the proxy.
type goodClients struct {
	prod, cons *kgo.Client
	acked      atomic.Int64
	failed     atomic.Int64
	consumed   atomic.Int64
	pollErrs   atomic.Int64

	mu        sync.Mutex
	latencies []timedLatency
	firstErr  error

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type timedLatency struct {
	at time.Time // when the record was acknowledged
	d  time.Duration
}

func startGoodClients(addr, topic, group string, opts ...kgo.Opt) (*goodClients, error) {
	prod, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.ProducerLinger(0), kgo.RecordDeliveryTimeout(2 * time.Minute)}, opts...)...)
	if err != nil {
		return nil, err
	}
	cons, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	if err != nil {
		prod.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &goodClients{prod: prod, cons: cons, cancel: cancel}
	g.wg.Add(2)
	go func() {
		defer g.wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ctx.Err() == nil; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			sent := time.Now()
			// ctx: a full buffer (a stalled proxy) blocks Produce until close.
			prod.Produce(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}, func(_ *kgo.Record, err error) {
				now := time.Now()
				if err != nil && ctx.Err() != nil {
					return // closing
				}
				if err != nil {
					g.failed.Add(1)
					g.mu.Lock()
					if g.firstErr == nil {
						g.firstErr = fmt.Errorf("produce: %w", err)
					}
					g.mu.Unlock()
					return
				}
				g.acked.Add(1)
				g.mu.Lock()
				g.latencies = append(g.latencies, timedLatency{now, now.Sub(sent)})
				g.mu.Unlock()
			})
		}
	}()
	go func() {
		defer g.wg.Done()
		for ctx.Err() == nil {
			fs := cons.PollFetches(ctx)
			fs.EachError(func(_ string, _ int32, err error) {
				if ctx.Err() == nil {
					g.pollErrs.Add(1)
				}
			})
			g.consumed.Add(int64(fs.NumRecords()))
		}
	}()
	return g, nil
}

// p99 is the 99th percentile produce latency of records acknowledged in
// [from, to), and how many there were.
func (g *goodClients) p99(from, to time.Time) (time.Duration, int) {
	g.mu.Lock()
	var ds []time.Duration
	for _, l := range g.latencies {
		if !l.at.Before(from) && l.at.Before(to) {
			ds = append(ds, l.d)
		}
	}
	g.mu.Unlock()
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	return ds[(len(ds)*99)/100], len(ds)
}

func (g *goodClients) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.firstErr
}

func (g *goodClients) close() {
	g.cancel()
	g.wg.Wait()
	g.prod.Close()
	g.cons.Close()
}
