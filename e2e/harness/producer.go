package harness

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Producer writes the scenario input at a steady rate: record i has key "s<i>" (spreading
// records over the input partitions) and value "g<i mod Groups>", the key CountApp counts by.
// Only acknowledged records are counted, so Expected is the exact truth for the verifier.
// The client is idempotent with acks=all (franz-go's default), so retries never duplicate.
type Producer struct {
	cl     *kgo.Client
	rate   int
	groups int

	mu       sync.Mutex
	expected map[string]int64
	acked    atomic.Int64
	failed   atomic.Int64
	firstErr error

	stop chan struct{}
	done chan struct{}
	wg   sync.WaitGroup
}

// ProducerOptions configure StartProducer.
type ProducerOptions struct {
	Bootstrap string
	Topic     string
	Rate      int // records per second (default 200)
	Groups    int // distinct count keys (default 20)
}

// StartProducer connects and starts producing until Stop.
func StartProducer(o ProducerOptions) (*Producer, error) {
	o.Rate = cmp.Or(o.Rate, 200)
	o.Groups = cmp.Or(o.Groups, 20)
	cl, err := kgo.NewClient(kgo.SeedBrokers(o.Bootstrap), kgo.DefaultProduceTopic(o.Topic),
		kgo.ProducerLinger(5*time.Millisecond), kgo.RecordDeliveryTimeout(60*time.Second))
	if err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	p := &Producer{cl: cl, rate: o.Rate, groups: o.Groups, expected: map[string]int64{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go p.loop()
	return p, nil
}

func (p *Producer) loop() {
	defer close(p.done)
	const tick = 20 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	start := time.Now()
	var sent int64
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			// Catch up to rate × elapsed, so a slow tick does not lower the rate.
			due := int64(now.Sub(start).Seconds() * float64(p.rate))
			for ; sent < due; sent++ {
				group := fmt.Sprintf("g%02d", sent%int64(p.groups))
				r := &kgo.Record{Key: []byte(fmt.Sprintf("s%d", sent)), Value: []byte(group)}
				p.wg.Add(1)
				p.cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
					defer p.wg.Done()
					if err != nil {
						p.failed.Add(1)
						p.mu.Lock()
						if p.firstErr == nil {
							p.firstErr = err
						}
						p.mu.Unlock()
						return
					}
					p.acked.Add(1)
					p.mu.Lock()
					p.expected[string(r.Value)]++
					p.mu.Unlock()
				})
			}
		}
	}
}

// Stop ends production, waits for every outstanding record, and closes the client. It fails
// if any record was not acknowledged: then the truth is unknown.
func (p *Producer) Stop() error {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
	p.wg.Wait()
	p.cl.Close()
	if n := p.failed.Load(); n > 0 {
		return fmt.Errorf("producer: %d records failed, first: %v", n, p.firstErr)
	}
	return nil
}

// Acked is the number of acknowledged records so far.
func (p *Producer) Acked() int64 { return p.acked.Load() }

// Expected is the true count per group key of acknowledged records (complete after Stop).
func (p *Producer) Expected() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.expected)
}
