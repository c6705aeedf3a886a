package proxy

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"
)

// reclaimThreshold is the Go heap size above which idle buffer memory is
// handed back to the operating system.
const reclaimThreshold = 64 << 20

// reclaimLoop returns buffer memory to the OS after bursts. gnet recycles
// its I/O buffers through sync.Pools, which are emptied only by garbage
// collections; a proxy that mostly moves pooled buffers allocates little, so
// collections are rare and the pools keep the peak of a burst (hundreds of
// MiB after a throughput test) indefinitely. A forced collection every
// period, only while the heap is large, drains them at the cost of one
// collection of a small live heap.
func (p *Proxy) reclaimLoop(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	var ms runtime.MemStats
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse+ms.HeapIdle-ms.HeapReleased > reclaimThreshold {
			debug.FreeOSMemory()
		}
	}
}
