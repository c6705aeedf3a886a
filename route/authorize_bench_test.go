package route

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkSteadyHeartbeatAuthorization: a steady member's
// StreamsGroupHeartbeat through the proxy (kfake upstream, one member, no
// topology: what a running app sends every heartbeat interval), one at a
// time, without authorization checks, with them cached (the default: a
// steady member asks nothing), and with the cache off (every heartbeat
// asks the broker for READ on the group: one round trip). It reports the
// probes per heartbeat.
func BenchmarkSteadyHeartbeatAuthorization(b *testing.B) {
	for _, c := range []struct {
		name string
		ttl  time.Duration
		off  bool
	}{{"none", 0, true}, {"cached", time.Hour, false}, {"uncached", 0, false}} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b, func(e *env) { e.authCache = c.ttl })
			if c.off {
				e.routes.auth = nil
			}
			resp, err := aclJoin("app", "m-1", "in").RequestWith(e.ctx, e.broker)
			if err != nil || resp.ErrorCode != 0 {
				b.Fatalf("join: %v %+v", err, resp)
			}
			epoch := resp.MemberEpoch
			hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
			hb.Group, hb.MemberID = "app", "m-1"
			// Until the member is stable (its changelog created, tasks
			// assigned, epoch unchanged).
			for range 200 {
				hb.MemberEpoch = epoch
				r, err := hb.RequestWith(e.ctx, e.broker)
				if err != nil || r.ErrorCode != 0 {
					b.Fatalf("heartbeat: %v %+v", err, r)
				}
				if r.MemberEpoch == epoch && len(r.Status) == 0 && r.ActiveTasks != nil {
					break
				}
				epoch = r.MemberEpoch
				time.Sleep(20 * time.Millisecond)
			}
			before := e.routes.auth.probes()
			b.ResetTimer()
			for range b.N {
				hb.MemberEpoch = epoch
				r, err := hb.RequestWith(e.ctx, e.broker)
				if err != nil || r.ErrorCode != 0 {
					b.Fatalf("heartbeat: %v %+v", err, r)
				}
				epoch = r.MemberEpoch
			}
			b.StopTimer()
			b.ReportMetric(float64(e.routes.auth.probes()-before)/float64(b.N), "probes/op")
		})
	}
}
