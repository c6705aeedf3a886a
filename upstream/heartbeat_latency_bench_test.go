package upstream

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// countingLog counts the appends that reach the log under it.
type countingLog struct {
	coordinator.Log
	appends atomic.Int64
}

func (l *countingLog) Append(group string, recs []streams.Record) error {
	l.appends.Add(1)
	return l.Log.Append(group, recs)
}

// BenchmarkSteadyHeartbeatLatency: heartbeats of a stable 1,000-member
// group (1,000 tasks), one at a time through the coordinator's executor,
// with the durable group log (a kfake cluster: transactional appends) and
// with the in-memory log, in the same run. It reports p50 and p99 latency
// and the appends per heartbeat, which must be 0: a steady heartbeat
// changes nothing, so it writes nothing and the durable log costs it
// nothing (only state changes pay an append).
func BenchmarkSteadyHeartbeatLatency(b *testing.B) {
	for _, durable := range []bool{false, true} {
		name := "memory"
		if durable {
			name = "durable"
		}
		b.Run(name, func(b *testing.B) {
			var base coordinator.Log = coordinator.NewMemoryLog()
			if durable {
				cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
				if err != nil {
					b.Fatal(err)
				}
				defer cluster.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				gl, _, err := OpenGroupLog(ctx, GroupLogOptions{Seeds: cluster.ListenAddrs(), Timeout: 10 * time.Second})
				if err != nil {
					b.Fatal(err)
				}
				defer gl.Close()
				base = gl
			}
			log := &countingLog{Log: base}
			c, epochs, writes := steadyGroup(b, log, 1000)
			if len(writes) == 0 {
				b.Fatal("forming the group wrote nothing: the log is not in use")
			}
			reqs := make([]*kmsg.StreamsGroupHeartbeatRequest, 0, len(epochs))
			for id, e := range epochs {
				reqs = append(reqs, hbReq("bench", id, e, nil))
			}
			done := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
			respond := func(r *kmsg.StreamsGroupHeartbeatResponse) { done <- r }
			client := streams.ClientInfo{ClientID: "bench"}
			lat := make([]time.Duration, 0, b.N)
			before := log.appends.Load()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				c.StreamsGroupHeartbeat(reqs[i%len(reqs)], client, respond)
				if r := <-done; r.ErrorCode != 0 {
					b.Fatalf("steady heartbeat answered error %d", r.ErrorCode)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			appends := log.appends.Load() - before
			if appends != 0 {
				b.Fatalf("%d appends during %d steady heartbeats, want none", appends, b.N)
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(appends)/float64(b.N), "appends/op")
			// The heartbeats that changed the group while it formed, each
			// answered once its records were appended.
			slices.Sort(writes)
			b.ReportMetric(float64(writes[len(writes)/2].Microseconds()), "write-p50-µs")
			b.ReportMetric(float64(writes[len(writes)*99/100].Microseconds()), "write-p99-µs")
		})
	}
}

// steadyGroup forms group "bench" of n members over one subtopology of n
// tasks on a coordinator appending to log, and returns it with the
// members' epochs once the group is stable, and the latencies of the
// heartbeats that wrote records meanwhile.
func steadyGroup(b *testing.B, log *countingLog, n int) (*coordinator.Coordinator, map[string]int32, []time.Duration) {
	b.Helper()
	cfg := streams.DefaultConfig()
	cfg.Defaults.InitialRebalanceDelay, cfg.Defaults.AssignmentInterval = 0, 0
	md := coordinator.NewStaticMetadata()
	md.SetTopic("in", int32(n))
	c, err := coordinator.New(coordinator.Options{Config: cfg, Log: log, Metadata: md})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	epochs := map[string]int32{}
	owned := map[string]*ownedTasks{}
	var writes []time.Duration
	call := func(req *kmsg.StreamsGroupHeartbeatRequest) {
		ch := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
		appended, start := log.appends.Load(), time.Now()
		c.StreamsGroupHeartbeat(req, streams.ClientInfo{ClientID: "bench"}, func(r *kmsg.StreamsGroupHeartbeatResponse) { ch <- r })
		r := <-ch
		if log.appends.Load() > appended {
			writes = append(writes, time.Since(start))
		}
		if r.ErrorCode != 0 {
			b.Fatalf("setup heartbeat of %s: error %d", req.MemberID, r.ErrorCode)
		}
		epochs[req.MemberID] = r.MemberEpoch
		if r.ActiveTasks != nil {
			owned[req.MemberID] = assigned(r)
		}
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("member-%04d", i)
		call(joinReq("bench", ids[i], fmt.Sprintf("process-%04d", i), "in"))
	}
	for round := 0; round < 4; round++ {
		for _, id := range ids {
			o := owned[id]
			if o == nil {
				o = &ownedTasks{}
			}
			call(hbReq("bench", id, epochs[id], o))
		}
	}
	if g := describe(c, "bench"); len(g) != 1 || g[0].State != "Stable" {
		b.Fatalf("bench group not stable: %+v", g)
	}
	return c, epochs, writes
}
