//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/e2e/harness"
)

// The attacks of TestOverload, in the order they run. Each attacker binds
// its own loopback source addresses (127.0.<n>.x, never 127.0.0.1, the good
// clients'), so a per-IP limit sees them as other clients.
func overloadAttacks() []overloadAttack {
	return []overloadAttack{
		{"connection flood: 1,500 idle, then a burst of 1,500", "limits.max-connections (derived from the descriptor limit)", false, attackConnFlood},
		{"300 connections from one IP", fmt.Sprintf("limits.max-connections-per-ip=%d", overloadPerIP), false, attackPerIP},
		{"8 JoinGroup size prefixes of 100 MiB, 40 MiB sent, stalled", "limits.max-intercepted-bytes, max-buffered-bytes, request-timeout", false, prefixAttack(joinGroupPrefix)},
		{"8 Produce size prefixes of 100 MiB, 40 MiB sent, stalled", "limits.max-buffered-bytes, request-timeout", false, prefixAttack(producePrefix)},
		{"4 connections pipelining ApiVersions+Metadata, never reading", "limits.max-buffered-bytes", false, attackPipeline},
		{"500 connections sending 6 bytes of a frame; 50 idle after ApiVersions", "limits.request-timeout, limits.connections-max-idle", false, attackSlowFrames},
		{"4 StreamsGroupHeartbeat joins with ~6.5 MiB topologies (30,000 subtopologies)", "topology size bounds", false, attackBigTopology},
		{"member, process and group ids of 1 MiB", "id size bounds, log lines capped", false, attackHugeIDs},
		{"2,000 streams groups joined by one client, sessions left to expire", "empty groups expire, anchors leave", false, attackManyGroups},
		{"API keys 999 and 76 (not advertised)", "unadvertised keys close the connection", false, attackUnknownKeys},
		{"TLS: 600 handshakes at once; 300 stalled handshakes", "tls.max-handshakes=64, tls.handshake-timeout", true, attackTLS},
	}
}

func attackConnFlood(t *testing.T, o *overloadRun) string {
	srcs := harness.LoopbackSources(10, 30) // 100 a source: below the per-IP limit
	dial := harness.TCPDialer(o.px.Bootstrap, 10*time.Second)
	idle := harness.OpenFlood(o.ctx, dial, srcs, 1500, 100, 10*time.Second)
	defer idle.Close()
	burst := harness.OpenFlood(o.ctx, dial, srcs, 1500, 500, 10*time.Second)
	defer burst.Close()
	open := len(idle.Open) + len(burst.Open)
	// The good clients work on while the flood holds what it got.
	acked := o.good.acked.Load()
	err := waitFor(o.ctx, 60*time.Second, func() bool { return o.good.acked.Load() > acked+50 || o.px.Exited() })
	if err != nil && !o.px.Exited() {
		t.Errorf("good producer stalled while the flood held %d connections", open)
	}
	if open >= idle.Total()+burst.Total() {
		t.Errorf("all %d connections were served: no limit below the descriptor limit %d", open, overloadNoFile)
	}
	if open > overloadNoFile/2 {
		t.Errorf("%d attack connections held open under a descriptor limit of %d (each holds a client and an upstream descriptor)", open, overloadNoFile)
	}
	return fmt.Sprintf("idle phase %s; burst %s; %d held open", floodText(idle), floodText(burst), open)
}

func floodText(f *harness.Flood) string {
	return fmt.Sprintf("%d answered, %d closed, %d stalled, %d refused", f.Answered, f.Closed, f.Stalled, f.Refused)
}

func attackPerIP(t *testing.T, o *overloadRun) string {
	f := harness.OpenFlood(o.ctx, harness.TCPDialer(o.px.Bootstrap, 10*time.Second), []string{"127.0.20.2"}, 300, 100, 10*time.Second)
	defer f.Close()
	if f.Answered > overloadPerIP {
		t.Errorf("%d connections from one IP served, limit %d", f.Answered, overloadPerIP)
	}
	if f.Answered == 0 {
		t.Errorf("no connection from the IP served: %s", floodText(f))
	}
	return floodText(f)
}

func joinGroupPrefix() ([]byte, error) {
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Version = 5
	jg.Group, jg.ProtocolType = "overload-prefix", "consumer"
	jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = 30000, 30000
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 1}}}
	return harness.FramePrefix(jg, 100<<20)
}

func producePrefix() ([]byte, error) {
	p := kmsg.NewPtrProduceRequest()
	p.Version = 7
	p.Acks, p.TimeoutMillis = -1, 30000
	p.Topics = []kmsg.ProduceRequestTopic{{Topic: "good", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0}}}}
	return harness.FramePrefix(p, 100<<20)
}

// prefixAttack: 8 connections each send a frame's size prefix claiming
// 100 MiB (the default max-frame-bytes), the request header and 40 MiB of
// it, then stall. The proxy must not hold 320 MiB, and must close them (a
// frame not arriving whole within request-timeout, or refused from its
// prefix).
func prefixAttack(frame func() ([]byte, error)) func(t *testing.T, o *overloadRun) string {
	return func(t *testing.T, o *overloadRun) string {
		prefix, err := frame()
		if err != nil {
			t.Fatal(err)
		}
		srcs := harness.LoopbackSources(30, 8)
		conns := make([]net.Conn, len(srcs))
		sent := make([]int, len(srcs))
		var closedEarly, stalled int
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i, src := range srcs {
			c, err := harness.DialFrom(src, o.px.Bootstrap, 10*time.Second)
			if err != nil {
				t.Errorf("dial %d: %v", i, err)
				continue
			}
			conns[i] = c
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := harness.SendPartial(c, prefix, 40<<20, 5*time.Second)
				mu.Lock()
				defer mu.Unlock()
				sent[i] = n
				switch {
				case harness.IsClosedErr(err):
					closedEarly++
				case err != nil:
					stalled++
				}
			}()
		}
		wg.Wait()
		time.Sleep(2 * time.Second) // held: the sampler sees what stays
		var live []net.Conn
		total := 0
		for i, c := range conns {
			if c != nil {
				live = append(live, c)
				defer c.Close()
			}
			total += sent[i]
		}
		closed := harness.CountClosed(live, overloadRequestTimeout+overloadSlack)
		if closed < len(live) {
			t.Errorf("%d of %d connections with a partial frame still open %s after the attack", len(live)-closed, len(live), overloadRequestTimeout+overloadSlack)
		}
		return fmt.Sprintf("%d MiB sent in all; %d closed while sending, %d stopped being read; %d of %d closed by the proxy within %s",
			total>>20, closedEarly, stalled, closed, len(live), overloadRequestTimeout+overloadSlack)
	}
}

// attackPipeline: 4 connections write ApiVersions and Metadata (all topics)
// requests for 20 s and never read a response. The proxy must stop reading
// them (a write stalls for 3 s) or close them; its memory must stay bounded.
func attackPipeline(t *testing.T, o *overloadRun) string {
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "overload", "0"
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	frames := [][]byte{harness.RequestFrame(av, 1), harness.RequestFrame(md, 2)}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var results []string
	unchecked := 0
	for _, src := range harness.LoopbackSources(40, 4) {
		c, err := harness.DialFrom(src, o.px.Bootstrap, 10*time.Second)
		if err != nil {
			t.Errorf("dial: %v", err)
			continue
		}
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			written, blocked, err := harness.Pipeline(c, frames, 20*time.Second, 3*time.Second)
			mu.Lock()
			defer mu.Unlock()
			state := "blocked"
			switch {
			case err != nil:
				state = "closed"
			case !blocked:
				state = "read for 20 s"
				unchecked++
			}
			results = append(results, fmt.Sprintf("%d MiB %s", written>>20, state))
		}()
	}
	wg.Wait()
	if unchecked > 0 {
		t.Errorf("%d of 4 connections that never read were read from for 20 s", unchecked)
	}
	return "per connection: " + strings.Join(results, ", ")
}

// attackSlowFrames: 500 connections (100 from each of 5 sources) send a
// size prefix and 2 bytes of a header and nothing more; 50 more finish an
// ApiVersions and fall silent. request-timeout must close the first,
// connections-max-idle the others.
func attackSlowFrames(t *testing.T, o *overloadRun) string {
	var partial []net.Conn
	for _, src := range harness.LoopbackSources(50, 5) {
		for range 100 {
			c, err := harness.DialFrom(src, o.px.Bootstrap, 10*time.Second)
			if err != nil {
				t.Errorf("dial: %v", err)
				continue
			}
			defer c.Close()
			if _, err := c.Write([]byte{0, 0, 0, 100, 0, 3}); err != nil {
				t.Errorf("write: %v", err)
			}
			partial = append(partial, c)
		}
	}
	idle := harness.OpenFlood(o.ctx, harness.TCPDialer(o.px.Bootstrap, 10*time.Second), harness.LoopbackSources(55, 1), 50, 50, 10*time.Second)
	defer idle.Close()
	var closedPartial, closedIdle int
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		closedPartial = harness.CountClosed(partial, overloadRequestTimeout+overloadSlack)
	}()
	go func() { defer wg.Done(); closedIdle = harness.CountClosed(idle.Open, overloadIdle+overloadSlack) }()
	wg.Wait()
	if closedPartial < len(partial) {
		t.Errorf("%d of %d connections with 6 bytes of a frame still open after %s", len(partial)-closedPartial, len(partial), overloadRequestTimeout+overloadSlack)
	}
	if closedIdle < len(idle.Open) {
		t.Errorf("%d of %d idle connections still open after %s", len(idle.Open)-closedIdle, len(idle.Open), overloadIdle+overloadSlack)
	}
	return fmt.Sprintf("%d of %d partial frames closed within %s; %d of %d idle closed within %s",
		closedPartial, len(partial), overloadRequestTimeout+overloadSlack, closedIdle, len(idle.Open), overloadIdle+overloadSlack)
}

// heartbeat sends one StreamsGroupHeartbeat on a fresh connection from src
// and reads its answer: the response, or an error that IsClosedErr when
// the proxy closed the connection instead.
func heartbeat(o *overloadRun, src string, req *kmsg.StreamsGroupHeartbeatRequest) (*kmsg.StreamsGroupHeartbeatResponse, int, error) {
	c, err := harness.DialFrom(src, o.px.Bootstrap, 10*time.Second)
	if err != nil {
		return nil, 0, err
	}
	defer c.Close()
	frame := harness.RequestFrame(req, 1)
	_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(frame); err != nil {
		return nil, len(frame), err
	}
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.Version = req.Version
	_, err = harness.ReadResponse(c, resp, 60*time.Second)
	return resp, len(frame), err
}

// refusedText says how a heartbeat was refused, or "" if it was accepted.
func refusedText(resp *kmsg.StreamsGroupHeartbeatResponse, err error) string {
	switch {
	case harness.IsClosedErr(err):
		return "connection closed"
	case err != nil:
		return "error: " + err.Error()
	case resp.ErrorCode != 0:
		msg := ""
		if resp.ErrorMessage != nil {
			msg = " " + *resp.ErrorMessage
			if len(msg) > 120 {
				msg = msg[:120] + "..."
			}
		}
		return fmt.Sprintf("error code %d%s", resp.ErrorCode, msg)
	}
	return ""
}

// bigTopology is a topology of n subtopologies, each with its own source,
// repartition and changelog topics (none exists: no topic is created).
func bigTopology(group string, n int) *kmsg.StreamsGroupHeartbeatRequestTopology {
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	for i := range n {
		st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		st.SubtopologyID = fmt.Sprint(i)
		st.SourceTopics = []string{fmt.Sprintf("%s-source-topic-%06d", group, i)}
		st.RepartitionSinkTopics = []string{fmt.Sprintf("%s-KSTREAM-AGGREGATE-STATE-STORE-%010d-repartition", group, i+1)}
		st.StateChangelogTopics = []kmsg.TopicInfo{{Topic: fmt.Sprintf("%s-KSTREAM-AGGREGATE-STATE-STORE-%010d-changelog", group, i),
			Configs: []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "compact"}}}}
		topo.Subtopologies = append(topo.Subtopologies, st)
	}
	return &topo
}

func attackBigTopology(t *testing.T, o *overloadRun) string {
	refusedN, first, size := 0, "", 0
	for i, src := range harness.LoopbackSources(60, 4) {
		group := fmt.Sprintf("overload-topo-%d", i)
		req := streamsJoin(group, fmt.Sprintf("overload-topo-member-%d", i), nil, "")
		req.Topology = bigTopology(group, 30000)
		resp, n, err := heartbeat(o, src, req)
		size = n
		refused := refusedText(resp, err)
		if refused == "" {
			t.Errorf("group %s: a join with a topology of 30,000 subtopologies (%.1f MiB) was accepted", group, float64(n)/(1<<20))
			continue
		}
		refusedN++
		if first == "" {
			first = refused
		}
	}
	out := fmt.Sprintf("%d of 4 joins of %.1f MiB refused", refusedN, float64(size)/(1<<20))
	if first != "" {
		out += " (first: " + first + ")"
	}
	return out
}

func attackHugeIDs(t *testing.T, o *overloadRun) string {
	huge := strings.Repeat("x", 1<<20)
	before, _ := os.Stat(o.px.Log)
	var results []string
	for i, tc := range []struct {
		name string
		set  func(*kmsg.StreamsGroupHeartbeatRequest)
	}{
		{"member id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberID = huge }},
		{"process id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.ProcessID = &huge }},
		{"group id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.Group = huge }},
	} {
		req := streamsJoin(fmt.Sprintf("overload-ids-%d", i), fmt.Sprintf("overload-ids-member-%d", i), []string{"overload-missing"}, "overload-ids-changelog")
		tc.set(req)
		resp, _, err := heartbeat(o, fmt.Sprintf("127.0.65.%d", i+2), req)
		refused := refusedText(resp, err)
		if refused == "" {
			t.Errorf("a join with a %s of 1 MiB was accepted", tc.name)
			refused = "accepted"
		}
		results = append(results, tc.name+": "+refused)
	}
	time.Sleep(time.Second) // the log lines of the last request
	after, _ := os.Stat(o.px.Log)
	grew := int64(0)
	if before != nil && after != nil {
		grew = after.Size() - before.Size()
	}
	if grew > 1<<20 {
		t.Errorf("the proxy's log grew by %.1f MiB for 3 requests (log lines must be capped)", float64(grew)/(1<<20))
	}
	return fmt.Sprintf("%s; log +%.2f MiB", strings.Join(results, "; "), float64(grew)/(1<<20))
}

// attackManyGroups: one connection joins 2,000 streams groups (one member
// each, pipelined 50 at a time) and disappears. Once the members' sessions
// expire the groups are empty: they must expire and their anchors leave the
// upstream's classic groups (checked on a sample, on the broker directly).
func attackManyGroups(t *testing.T, o *overloadRun) string {
	const n, window = 2000, 50
	c, err := harness.DialFrom("127.0.70.2", o.px.Bootstrap, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	accepted, refused := 0, map[string]int{}
	start := time.Now()
	broken := false // the connection failed: no more joins on it
	for from := 0; from < n && !broken; from += window {
		var batch []byte
		for i := from; i < from+window; i++ {
			req := streamsJoin(fmt.Sprintf("overload-many-%04d", i), fmt.Sprintf("overload-many-member-%04d", i), []string{"overload-missing"}, fmt.Sprintf("overload-many-%04d-store-changelog", i))
			batch = append(batch, harness.RequestFrame(req, int32(i))...)
		}
		_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if _, err := c.Write(batch); err != nil {
			refused[fmt.Sprintf("write: %v", err)]++
			break
		}
		for range window {
			resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
			_, err := harness.ReadResponse(c, resp, 60*time.Second)
			if r := refusedText(resp, err); r != "" {
				refused[r]++
				if broken = err != nil; broken {
					break
				}
				continue
			}
			accepted++
		}
	}
	joined := time.Since(start)
	c.Close()
	outcome := fmt.Sprintf("%d joined in %.1f s", accepted, joined.Seconds())
	for r, k := range refused {
		outcome += fmt.Sprintf(", %d refused: %s", k, r)
	}
	if accepted == 0 {
		return outcome
	}
	// The sessions (10 s) expire; then every sampled group's anchor must
	// have left the upstream group.
	adm, err := kgo.NewClient(kgo.SeedBrokers(o.broker.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	sample := []string{"overload-many-0000", "overload-many-0499", "overload-many-0999", "overload-many-1499", fmt.Sprintf("overload-many-%04d", accepted-1)}
	members := func() int {
		ctx, cancel := context.WithTimeout(o.ctx, 10*time.Second)
		defer cancel()
		described, err := kadm.NewClient(adm).DescribeGroups(ctx, sample...)
		if err != nil {
			return -1
		}
		total := 0
		for _, g := range described {
			total += len(g.Members)
		}
		return total
	}
	time.Sleep(10 * time.Second)
	held := members()
	// Sessions of 10 s, then Empty for overloadGroupExpiry, then the
	// anchors leave one at a time: 60 s more is generous.
	if err := waitFor(o.ctx, overloadGroupExpiry+60*time.Second, func() bool { return members() == 0 }); err != nil {
		t.Errorf("%s after the last join, the sampled groups' upstream classic groups still hold %d anchor members", 10*time.Second+overloadGroupExpiry+60*time.Second, members())
		return outcome + fmt.Sprintf("; anchors of the sample held %d members 10 s after, %d %s after", held, members(), 10*time.Second+overloadGroupExpiry+60*time.Second)
	}
	return outcome + "; the sampled anchors left"
}

// attackUnknownKeys: one request of API key 999 and one of 76
// (ShareGroupHeartbeat, which neither Kafka 3.9 nor streamshift
// advertises): Kafka closes such a connection, and so must the proxy,
// without an answer.
func attackUnknownKeys(t *testing.T, o *overloadRun) string {
	var results []string
	for i, key := range []int16{999, 76} {
		c, err := harness.DialFrom(fmt.Sprintf("127.0.75.%d", i+2), o.px.Bootstrap, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write(harness.RawFrame(key, 0, 1, []byte{0, 0, 0, 0})); err != nil {
			t.Errorf("key %d: write: %v", key, err)
		}
		_ = c.SetReadDeadline(time.Now().Add(15 * time.Second))
		var b [4]byte
		n, err := c.Read(b[:])
		switch {
		case n > 0:
			t.Errorf("key %d was answered", key)
			results = append(results, fmt.Sprintf("key %d answered", key))
		case harness.IsClosedErr(err):
			results = append(results, fmt.Sprintf("key %d: closed", key))
		default:
			t.Errorf("key %d: connection still open after 15 s (%v)", key, err)
			results = append(results, fmt.Sprintf("key %d: open", key))
		}
	}
	return strings.Join(results, "; ")
}

// attackTLS: 600 TLS handshakes at once on the TLS proxy (100 from each of
// 6 sources), then 300 connections that send 5 bytes of a ClientHello
// record and stall. max-handshakes refuses what it cannot run,
// handshake-timeout closes the stalled ones.
func attackTLS(t *testing.T, o *overloadRun) string {
	flood := harness.OpenFlood(o.ctx, harness.TLSDialer(o.tlsPx.Bootstrap, o.tlsConfig, 15*time.Second), harness.LoopbackSources(80, 6), 600, 600, 15*time.Second)
	flood.Close()
	if flood.Answered == 0 {
		t.Errorf("no TLS connection of the flood was served: %s", floodText(flood))
	}
	var stalled []net.Conn
	for _, src := range harness.LoopbackSources(90, 3) {
		for range 100 {
			c, err := harness.DialFrom(src, o.tlsPx.Bootstrap, 10*time.Second)
			if err != nil {
				t.Errorf("dial: %v", err)
				continue
			}
			defer c.Close()
			_, _ = c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00}) // a handshake record of 512 bytes, never sent
			stalled = append(stalled, c)
		}
	}
	closed := harness.CountClosed(stalled, overloadHandshake+overloadSlack)
	if closed < len(stalled) {
		t.Errorf("%d of %d stalled handshakes still open after %s", len(stalled)-closed, len(stalled), overloadHandshake+overloadSlack)
	}
	return fmt.Sprintf("flood: %s; %d of %d stalled handshakes closed within %s", floodText(flood), closed, len(stalled), overloadHandshake+overloadSlack)
}
