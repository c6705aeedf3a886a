package coordinator

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

// benchGroup builds a stable group of members members on processes
// processes, over subtopologies stateless subtopologies of tasksPer tasks
// each, and returns the members' epochs.
func benchGroup(tb testing.TB, c *Coordinator, clock *ManualClock, md *StaticMetadata, members, processes, subtopologies, tasksPer int) map[string]int32 {
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	for s := 0; s < subtopologies; s++ {
		st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		st.SubtopologyID = fmt.Sprint(s)
		st.SourceTopics = []string{fmt.Sprintf("in-%d", s)}
		topo.Subtopologies = append(topo.Subtopologies, st)
		md.SetTopic(st.SourceTopics[0], int32(tasksPer))
	}
	client := streams.ClientInfo{ClientID: "bench", ClientHost: "/127.0.0.1"}
	epochs := map[string]int32{}
	owned := map[string]streams.TaskSets{}
	call := func(req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
		var resp *kmsg.StreamsGroupHeartbeatResponse
		c.StreamsGroupHeartbeat(req, client, func(r *kmsg.StreamsGroupHeartbeatResponse) { resp = r })
		if resp == nil || resp.ErrorCode != 0 {
			tb.Fatalf("setup heartbeat failed: %+v", resp)
		}
		epochs[req.MemberID] = resp.MemberEpoch
		if a, ok := assigned(resp); ok {
			owned[req.MemberID] = a
		}
		return resp
	}
	for i := 0; i < members; i++ {
		call(joinReq("bench", fmt.Sprintf("member-%04d", i), fmt.Sprintf("process-%03d", i%processes), &topo))
	}
	// The initial delay ends: one assignment for everyone.
	clock.Advance(c.cfg.Defaults.InitialRebalanceDelay)
	for round := 0; round < 3; round++ {
		for i := 0; i < members; i++ {
			id := fmt.Sprintf("member-%04d", i)
			o := owned[id]
			call(hbReq("bench", id, epochs[id], &o))
		}
	}
	g := c.queues["bench"].group
	if g.State() != streams.GroupStable {
		tb.Fatalf("bench group not stable: %v", g.State())
	}
	return epochs
}

func newBenchCoordinator(tb testing.TB) (*Coordinator, *ManualClock, *StaticMetadata) {
	clock := NewManualClock(testStart)
	md := NewStaticMetadata()
	cfg := streams.DefaultConfig()
	c, err := New(Options{Config: cfg, Clock: clock, Metadata: md, Assignor: assignor.StickyTaskAssignor{}})
	if err != nil {
		tb.Fatal(err)
	}
	c.inline = true
	return c, clock, md
}

// BenchmarkSteadyHeartbeat: heartbeats of a stable 1,000-member group with
// 10,000 tasks, as the Java client sends them when nothing changed (null task
// lists), served inline on the caller's goroutine.
func BenchmarkSteadyHeartbeat(b *testing.B) {
	c, _, md := newBenchCoordinator(b)
	epochs := benchGroup(b, c, c.clock.(*ManualClock), md, 1000, 200, 10, 1000)
	reqs := make([]*kmsg.StreamsGroupHeartbeatRequest, 0, len(epochs))
	for id, e := range epochs {
		r := hbReq("bench", id, e, nil)
		r.EndpointInformationEpoch = 0
		reqs = append(reqs, r)
	}
	client := streams.ClientInfo{ClientID: "bench", ClientHost: "/127.0.0.1"}
	var last *kmsg.StreamsGroupHeartbeatResponse
	respond := func(r *kmsg.StreamsGroupHeartbeatResponse) { last = r }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.StreamsGroupHeartbeat(reqs[i%len(reqs)], client, respond)
	}
	b.StopTimer()
	if last.ErrorCode != 0 || last.ActiveTasks != nil {
		b.Fatalf("steady heartbeat answered %+v", last)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "heartbeats/s")
}

// BenchmarkSteadyHeartbeatAsync is the same through the asynchronous entry
// point (the group's queue goroutine), with the system clock's timers.
func BenchmarkSteadyHeartbeatAsync(b *testing.B) {
	c, clock, md := newBenchCoordinator(b)
	epochs := benchGroup(b, c, clock, md, 1000, 200, 10, 1000)
	c.inline = false
	c.clock = SystemClock{}
	reqs := make([]*kmsg.StreamsGroupHeartbeatRequest, 0, len(epochs))
	for id, e := range epochs {
		r := hbReq("bench", id, e, nil)
		r.EndpointInformationEpoch = 0
		reqs = append(reqs, r)
	}
	client := streams.ClientInfo{ClientID: "bench", ClientHost: "/127.0.0.1"}
	done := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1024)
	respond := func(r *kmsg.StreamsGroupHeartbeatResponse) { done <- r }
	b.ReportAllocs()
	b.ResetTimer()
	inflight := 0
	for i := 0; i < b.N; i++ {
		c.StreamsGroupHeartbeat(reqs[i%len(reqs)], client, respond)
		inflight++
		if inflight == cap(done) {
			for ; inflight > 0; inflight-- {
				if r := <-done; r.ErrorCode != 0 {
					b.Fatalf("error %d", r.ErrorCode)
				}
			}
		}
	}
	for ; inflight > 0; inflight-- {
		<-done
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "heartbeats/s")
	c.Close()
}

// groupMemoryTarget bounds the heap of BenchmarkGroupMemory's group (the
// coordinator issue's target; BENCHMARKS.md).
const groupMemoryTarget = 50 << 20

// BenchmarkGroupMemory reports the heap a stable 1,000-member, 10,000-task
// group holds in the coordinator (state, log, timers), per group, per member
// and per task. Each iteration forms one group; the heap is read after a GC
// with the group still reachable. ns/op is dropped: formation time is
// BenchmarkGroupFormation's measure.
func BenchmarkGroupMemory(b *testing.B) {
	const members, processes, subtopologies, tasksPer = 1000, 200, 10, 1000
	var total int64
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c, clock, md := newBenchCoordinator(b)
		benchGroup(b, c, clock, md, members, processes, subtopologies, tasksPer)
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(c)
		total += int64(after.HeapAlloc) - int64(before.HeapAlloc)
	}
	perGroup := float64(total) / float64(b.N)
	if perGroup > groupMemoryTarget {
		b.Fatalf("the group takes %.1f MiB, over the %d MiB target", perGroup/(1<<20), groupMemoryTarget>>20)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(perGroup, "B/group")
	b.ReportMetric(perGroup/members, "B/member")
	b.ReportMetric(perGroup/(subtopologies*tasksPer), "B/task")
}

// BenchmarkHeartbeatCodec is the baseline measured in the same run: decoding
// a steady-state heartbeat request and encoding its response, the work the
// proxy does for every heartbeat whatever the coordinator costs.
func BenchmarkHeartbeatCodec(b *testing.B) {
	req := hbReq("bench", "member-0001-0000-0000-000000000000", 7, nil)
	req.EndpointInformationEpoch = 3
	raw := req.AppendTo(nil)
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.Version = 1
	resp.MemberID, resp.MemberEpoch, resp.HeartbeatIntervalMillis = req.MemberID, 7, 5000
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Version = 1
		if err := r.ReadFrom(raw); err != nil {
			b.Fatal(err)
		}
		buf = resp.AppendTo(buf[:0])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "heartbeats/s")
}

// BenchmarkGroupFormation: 1,000 members join within the initial delay, the
// delay ends (one target assignment of 10,000 tasks, its records), and every
// member heartbeats once with what it owns (1,000 reconciliations). One
// iteration forms one group; heartbeat codec work is not included.
func BenchmarkGroupFormation(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c, clock, md := newBenchCoordinator(b)
		topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		for s := 0; s < 10; s++ {
			st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
			st.SubtopologyID = fmt.Sprint(s)
			st.SourceTopics = []string{fmt.Sprintf("in-%d", s)}
			topo.Subtopologies = append(topo.Subtopologies, st)
			md.SetTopic(st.SourceTopics[0], 1000)
		}
		joins := make([]*kmsg.StreamsGroupHeartbeatRequest, 1000)
		for m := range joins {
			joins[m] = joinReq("bench", fmt.Sprintf("member-%04d", m), fmt.Sprintf("process-%03d", m%200), &topo)
		}
		client := streams.ClientInfo{ClientID: "bench", ClientHost: "/127.0.0.1"}
		epochs := make([]int32, 1000)
		b.StartTimer()
		for m, j := range joins {
			c.StreamsGroupHeartbeat(j, client, func(r *kmsg.StreamsGroupHeartbeatResponse) { epochs[m] = r.MemberEpoch })
		}
		clock.Advance(streams.DefaultInitialRebalanceDelay)
		for m := range joins {
			req := hbReq("bench", joins[m].MemberID, epochs[m], &streams.TaskSets{})
			c.StreamsGroupHeartbeat(req, client, func(r *kmsg.StreamsGroupHeartbeatResponse) {
				if r.ErrorCode != 0 || r.ActiveTasks == nil {
					b.Fatalf("member %d: %+v", m, r)
				}
			})
		}
		b.StopTimer()
		if st := c.queues["bench"].group.State(); st != streams.GroupStable {
			b.Fatalf("state %v", st)
		}
		b.StartTimer()
	}
}
