package proxy

import (
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupTap wants the group APIs only, as a capture of one group does, and
// drops what it gets.
type groupTap struct{}

func (groupTap) Wants(key int16) bool {
	switch kmsg.Key(key) {
	case kmsg.JoinGroup, kmsg.SyncGroup, kmsg.Heartbeat, kmsg.LeaveGroup, kmsg.OffsetCommit, kmsg.OffsetFetch,
		kmsg.FindCoordinator, kmsg.DescribeGroups, kmsg.StreamsGroupHeartbeat, kmsg.StreamsGroupDescribe:
		return true
	}
	return false
}

func (groupTap) Exchange(*Exchange) {}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkForwardProduceTap forwards acks=1 Produce requests through two
// proxies in one process, one without a tap and one with a capture of the
// group APIs on, in alternating batches, and reports the process CPU per
// GiB forwarded through each and their ratio (tap/none: 1.00 is free).
// Everything but the proxy (the echo broker, the client) costs the same on
// both routes.
func BenchmarkForwardProduceTap(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		b.Run(strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
			up := startFakeBroker(b, serveEcho)
			plain := startProxy(b, []string{up.addr()}, func(o *Options) { o.Log = zerolog.Nop() })
			tapped := startProxy(b, []string{up.addr()}, func(o *Options) { o.Log = zerolog.Nop(); o.Tap = groupTap{} })
			frame := benchProduceFrame(size)
			conns := []*rawConn{dialRaw(b, plain.addr), dialRaw(b, tapped.addr)}
			buf := make([]byte, 0, 256)
			roundTrip := func(c *rawConn, corr int32) { buf = rawRoundTrip(b, c, frame, buf, corr) }
			for i := range 20 {
				roundTrip(conns[0], int32(i))
				roundTrip(conns[1], int32(i))
			}
			const batch = 32
			var cpu [2]time.Duration
			var n [2]int
			b.SetBytes(int64(2 * len(frame)))
			b.ResetTimer()
			for i := 0; i < b.N; i += batch {
				for route := range 2 {
					start := cpuTime()
					for j := 0; j < batch; j++ {
						roundTrip(conns[route], int32(i+j))
					}
					cpu[route] += cpuTime() - start
					n[route] += batch
				}
			}
			perGiB := func(route int) float64 {
				return cpu[route].Seconds() / (float64(n[route]*len(frame)) / (1 << 30))
			}
			b.ReportMetric(perGiB(0), "cpu-s/GiB-none")
			b.ReportMetric(perGiB(1), "cpu-s/GiB-tap")
			b.ReportMetric(perGiB(1)/perGiB(0), "tap/none")
		})
	}
}
