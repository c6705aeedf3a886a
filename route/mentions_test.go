package route

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"

	"bytes"
	"github.com/prometheus/client_golang/prometheus"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/proxy/proxytest"
)

// captured is an outcome that keeps the response as the handler gave it,
// unencoded, so a test sees what the proxy would encode.
type captured struct{ got chan kmsg.Response }

func newCaptured() *captured { return &captured{got: make(chan kmsg.Response, 1)} }

func (c *captured) Respond(resp kmsg.Response) { c.got <- resp }
func (c *captured) Forward()                   { c.got <- nil }
func (c *captured) ForwardRewritten(kmsg.Request, int16, func(kmsg.Response) kmsg.Response) {
	c.got <- nil
}

// encodeAsProxy encodes resp as the proxy's buildAnswer does: a response
// that knows its size is written into one buffer of that size.
func encodeAsProxy(resp kmsg.Response) []byte {
	if sr, ok := resp.(proxy.SizedResponse); ok {
		return sr.AppendTo(make([]byte, 0, sr.EncodedSize()))
	}
	return resp.AppendTo(nil)
}

// bigEndpointEnv is a served streams group "big" whose one member
// advertises a 100 kB endpoint host (application.server).
func bigEndpointEnv(t *testing.T) (*env, *proxytest.Conn) {
	t.Helper()
	e := newEnv(t, direct, func(e *env) {
		e.upstream, e.partitions, e.topics = nil, 3, []string{"words"}
	})
	member := e.conn(allowAll)
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.EndpointInformationEpoch, req.RebalanceTimeoutMillis = 1, "big", "member-1", -1, 30000
	pid := "process-1"
	req.ProcessID = &pid
	req.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: strings.Repeat("h", 100_000), Port: 9092}
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{"words"}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	if resp := respond[*kmsg.StreamsGroupHeartbeatResponse](e, member, req); resp.ErrorCode != 0 || resp.MemberEpoch < 1 {
		t.Fatalf("join: %+v", resp)
	}
	return e, member
}

// serveCaptured runs the table's route of key on req (served=true) or the
// bare handler before any wrapper (served=false: today's path, one
// description per mention), and returns the response it gives.
func serveCaptured(t *testing.T, e *env, conn *proxytest.Conn, body kmsg.Request, h proxy.InterceptorFunc) kmsg.Response {
	t.Helper()
	out := newCaptured()
	go h(conn.Request(body), out)
	select {
	case resp := <-out.got:
		if resp == nil {
			t.Fatal("forwarded, want answered here")
		}
		resp.SetVersion(body.GetVersion())
		return resp
	case <-time.After(30 * time.Second):
		t.Fatal("no answer")
	}
	return nil
}

func routeOf(t *testing.T, e *env, key kmsg.Key) proxy.InterceptorFunc {
	t.Helper()
	for _, rt := range e.routes.active() {
		if rt.key == key {
			return rt.serve
		}
	}
	t.Fatalf("no route for %s", key.Name())
	return nil
}

// A StreamsGroupDescribe naming a group with a 100 kB endpoint 1,000 times
// (issue #42) gets the answer Kafka gives, byte for byte, built with one
// allocation of its size: each group is described once and its encoding
// copied per mention. Before, each mention was described on its own and
// the whole list encoded by appending, about three times the answer in
// allocations (and RSS 581 → 1,145 MB for this request).
func TestStreamsGroupDescribeRepeatedGroupBuiltOnce(t *testing.T) {
	e, member := bigEndpointEnv(t)
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	for range 1000 {
		req.Groups = append(req.Groups, "big")
	}
	naive := encodeAsProxy(serveCaptured(t, e, member, req, handle(e.routes.streamsGroupDescribe).serve))
	if len(naive) < 100_000_000 {
		t.Fatalf("the naive answer is %d bytes, want the group described 1,000 times", len(naive))
	}
	route := routeOf(t, e, kmsg.StreamsGroupDescribe)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	works := e.coord.QueuedWork()
	got := encodeAsProxy(serveCaptured(t, e, member, req, route))
	runtime.ReadMemStats(&after)
	if n := e.coord.QueuedWork() - works; n != 1 {
		t.Fatalf("the group was described %d times (works queued on its executor), want once", n)
	}
	if !bytes.Equal(got, naive) {
		t.Fatalf("answer of %d bytes differs from the one built mention by mention (%d bytes)", len(got), len(naive))
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("answer %d bytes, allocated %d bytes building it (%.2f× the answer)", len(got), alloc, float64(alloc)/float64(len(got)))
	if alloc > uint64(len(got))*5/4 {
		t.Fatalf("building a %d-byte answer allocated %d bytes, want at most 1.25× (one buffer of its size)", len(got), alloc)
	}
}

// Repeats interleaved with invalid, unknown and refused groups come back
// in the order Kafka gives (refused first, then invalid ids, then the
// others in request order), byte for byte as built mention by mention.
func TestStreamsGroupDescribeRepeatedMixedOrder(t *testing.T) {
	e, _ := bigEndpointEnv(t)
	conn := e.conn(func(rt kmsg.ACLResourceType, op kmsg.ACLOperation, name string) bool {
		return rt == kmsg.ACLResourceTypeGroup && name == "secret"
	})
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Version = 1
	req.IncludeTopologyDescription = true
	req.Groups = []string{"big", "", "secret", "nope", "big", "", "secret", "nope", "big"}
	naive := serveCaptured(t, e, conn, req, handle(e.routes.streamsGroupDescribe).serve).(*kmsg.StreamsGroupDescribeResponse)
	if naive.Groups[0].Group != "secret" || naive.Groups[2].Group != "" || naive.Groups[4].ErrorCode != 0 {
		t.Fatalf("the naive answer is not in Kafka's order (refused, invalid, looked up): %+v", naive.Groups[:5])
	}
	route := routeOf(t, e, kmsg.StreamsGroupDescribe)
	if got := encodeAsProxy(serveCaptured(t, e, conn, req, route)); !bytes.Equal(got, encodeAsProxy(naive)) {
		t.Fatalf("answer differs from the one built mention by mention")
	}
	r := rand.New(rand.NewPCG(1, 2))
	ids := []string{"big", "", "secret", "nope", "other"}
	for range 50 {
		req.Groups = req.Groups[:0]
		for range 1 + r.IntN(20) {
			req.Groups = append(req.Groups, ids[r.IntN(len(ids))])
		}
		naive := encodeAsProxy(serveCaptured(t, e, conn, req, handle(e.routes.streamsGroupDescribe).serve))
		if got := encodeAsProxy(serveCaptured(t, e, conn, req, route)); !bytes.Equal(got, naive) {
			t.Fatalf("%q: answer differs from the one built mention by mention", req.Groups)
		}
	}
}

// DescribeGroups of a served group many times: answered here, repeated.
func TestDescribeGroupsRepeatedServedGroup(t *testing.T) {
	e, member := bigEndpointEnv(t)
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = 5
	for range 100 {
		req.Groups = append(req.Groups, "big")
	}
	naive := encodeAsProxy(serveCaptured(t, e, member, req, handle(e.routes.describeGroups).serve))
	got := serveCaptured(t, e, member, req, routeOf(t, e, kmsg.DescribeGroups))
	if _, ok := got.(proxy.SizedResponse); !ok {
		t.Fatalf("answer is a %T, want repeated entries", got)
	}
	if !bytes.Equal(encodeAsProxy(got), naive) {
		t.Fatal("answer differs from the one built mention by mention")
	}
}

// DescribeConfigs of one GROUP resource many times, with synonyms and
// documentation, repeats the resource's encoding, byte for byte.
func TestDescribeConfigsRepeatedGroupResource(t *testing.T) {
	e, member := bigEndpointEnv(t)
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version, req.IncludeSynonyms, req.IncludeDocumentation = 4, true, true
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "big"
	other := res
	other.ConfigNames = []string{"streams.num.standby.replicas"}
	for range 50 {
		req.Resources = append(req.Resources, res, other)
	}
	naive := encodeAsProxy(serveCaptured(t, e, member, req, handle(e.routes.describeConfigs).serve))
	got := serveCaptured(t, e, member, req, routeOf(t, e, kmsg.DescribeConfigs))
	if _, ok := got.(proxy.SizedResponse); !ok {
		t.Fatalf("answer is a %T, want repeated entries", got)
	}
	if !bytes.Equal(encodeAsProxy(got), naive) {
		t.Fatal("answer differs from the one built mention by mention")
	}
}

// bigEndpointProxy is bigEndpointEnv through a proxy whose options tune
// changes, with a metrics registry.
func bigEndpointProxy(t *testing.T, tune func(*proxy.Options)) (*env, *prometheus.Registry) {
	t.Helper()
	var reg *prometheus.Registry
	e := newEnv(t, func(e *env) {
		e.upstream, e.partitions, e.topics = nil, 3, []string{"words"}
		e.proxyOpts = func(o *proxy.Options) {
			reg = prometheus.NewRegistry() // a fresh one for each proxy startProxy tries
			o.Metrics = reg
			if tune != nil {
				tune(o)
			}
		}
	})
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.EndpointInformationEpoch, req.RebalanceTimeoutMillis = 1, "big", "member-1", -1, 30000
	pid := "process-1"
	req.ProcessID = &pid
	req.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: strings.Repeat("h", 100_000), Port: 9092}
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{"words"}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	resp, err := req.RequestWith(e.ctx, e.coordinatorOf("big", e.cl))
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("join: %v %+v", err, resp)
	}
	return e, reg
}

// rawExchange sends body on a connection of its own and returns the
// response body (after the correlation id and header tags), or the error
// that ended the connection.
func rawExchange(t *testing.T, addr string, body kmsg.Request) ([]byte, error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	frame := []byte{0, 0, 0, 0}
	frame = binary.BigEndian.AppendUint16(frame, uint16(body.Key()))
	frame = binary.BigEndian.AppendUint16(frame, uint16(body.GetVersion()))
	frame = binary.BigEndian.AppendUint32(frame, 7)
	frame = append(frame, 0xff, 0xff) // null client id
	if body.IsFlexible() {
		frame = append(frame, 0)
	}
	frame = body.AppendTo(frame)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	resp := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, resp); err != nil {
		return nil, err
	}
	at := 4
	if body.IsFlexible() {
		at++
	}
	return resp[at:], nil
}

func rejected(t *testing.T, reg *prometheus.Registry, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "streamshift_frames_rejected_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// Through the proxy: under max-answer-bytes the repeated describe is
// answered in full; over it (×1,000 of a 100 kB group is 100 MB, the
// default bound 64 MiB) the connection is closed without the answer
// being built, and streamshift_frames_rejected_total{reason="answer-too-large"}
// counts it. The next connection is served as before.
func TestStreamsGroupDescribeAnswerOverBoundCloses(t *testing.T) {
	e, reg := bigEndpointProxy(t, nil)
	describe := func(n int) *kmsg.StreamsGroupDescribeRequest {
		req := kmsg.NewPtrStreamsGroupDescribeRequest()
		for range n {
			req.Groups = append(req.Groups, "big")
		}
		return req
	}
	body, err := rawExchange(t, e.addr, describe(300))
	if err != nil {
		t.Fatalf("×300 (30 MB, under the bound): %v", err)
	}
	resp := kmsg.NewPtrStreamsGroupDescribeResponse()
	if err := resp.ReadFrom(body); err != nil || len(resp.Groups) != 300 || resp.Groups[299].ErrorCode != 0 || len(resp.Groups[299].Members) != 1 {
		t.Fatalf("×300: %v, %d groups", err, len(resp.Groups))
	}
	if n := rejected(t, reg, "answer-too-large"); n != 0 {
		t.Fatalf("answer-too-large counted %v under the bound", n)
	}

	if _, err := rawExchange(t, e.addr, describe(1000)); err == nil {
		t.Fatal("×1,000 (100 MB, over the 64 MiB bound) answered, want the connection closed")
	}
	if n := rejected(t, reg, "answer-too-large"); n != 1 {
		t.Fatalf("streamshift_frames_rejected_total{reason=answer-too-large} = %v, want 1", n)
	}
	if _, err := rawExchange(t, e.addr, describe(1)); err != nil {
		t.Fatalf("a describe after the refused one: %v", err)
	}
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return 0
}

// Connections that ask for large answers and never read them (issue #42:
// three of them held 3 × 102.8 MB, none closed): an answer built here
// counts against limits.max-buffered-bytes like a forwarded one, and one
// that would exhaust the budget while its connection holds more than its
// share is refused before it is built (answer-too-large); the answers
// already admitted still reach their clients.
func TestAnswersCountAgainstTheBudget(t *testing.T) {
	e, reg := bigEndpointProxy(t, func(o *proxy.Options) {
		o.MaxBufferedBytes, o.MaxAnswerBytes = 64<<20, 40<<20
	})
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	for range 300 {
		req.Groups = append(req.Groups, "big")
	}
	send := func() net.Conn {
		c, err := net.Dial("tcp", e.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		frame := requestFrameOf(req, 7)
		if _, err := c.Write(frame); err != nil {
			t.Fatal(err)
		}
		return c
	}
	// Two readers that do not read: 2 × 30 MB held.
	a, b := send(), send()
	for gauge(t, reg, "streamshift_buffered_bytes") < 40<<20 {
		select {
		case <-e.ctx.Done():
			t.Fatalf("the two answers are not held: streamshift_buffered_bytes %v", gauge(t, reg, "streamshift_buffered_bytes"))
		case <-time.After(10 * time.Millisecond):
		}
	}
	// A third would take the total past 64 MiB, its share is a third.
	c := send()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, 4)); err == nil {
		t.Fatal("a third 30 MB answer was given with 60 MB of a 64 MiB budget held, want the connection closed")
	}
	if n := rejected(t, reg, "answer-too-large"); n != 1 {
		t.Fatalf("answer-too-large counted %v, want 1", n)
	}
	for _, c := range []net.Conn{a, b} {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		var size [4]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			t.Fatalf("an admitted answer: %v", err)
		}
		if n, err := io.Copy(io.Discard, io.LimitReader(c, int64(binary.BigEndian.Uint32(size[:])))); err != nil || n < 30_000_000 {
			t.Fatalf("an admitted answer: %d bytes, %v", n, err)
		}
	}
}

func requestFrameOf(body kmsg.Request, corr int32) []byte {
	frame := []byte{0, 0, 0, 0}
	frame = binary.BigEndian.AppendUint16(frame, uint16(body.Key()))
	frame = binary.BigEndian.AppendUint16(frame, uint16(body.GetVersion()))
	frame = binary.BigEndian.AppendUint32(frame, uint32(corr))
	frame = append(frame, 0xff, 0xff) // null client id
	if body.IsFlexible() {
		frame = append(frame, 0)
	}
	frame = body.AppendTo(frame)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	return frame
}

// OffsetFetch v9 naming one member of a served group many times, at its
// epoch and at a stale one: each (group, member, epoch) is checked once
// on the group's queue, and every mention gets its answer (the stale ones
// STALE_MEMBER_EPOCH, after the upstream's, as before).
func TestOffsetFetchRepeatedMemberCheckedOnce(t *testing.T) {
	e := newEnv(t)
	epoch := e.joinAndAssign("app", "m-1")
	if err := e.commit("app", "m-1", epoch, 1); err != nil {
		t.Fatal(err)
	}
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Version = 9
	member := "m-1"
	for range 500 {
		for _, ep := range []int32{epoch, epoch + 7} {
			g := kmsg.NewOffsetFetchRequestGroup()
			g.Group, g.MemberID, g.MemberEpoch = "app", &member, ep
			fetch.Groups = append(fetch.Groups, g)
		}
	}
	works := e.coord.QueuedWork()
	fr, err := fetch.RequestWith(e.ctx, e.broker)
	if err != nil || len(fr.Groups) != 1000 {
		t.Fatalf("fetch: %v, %d groups", err, len(fr.Groups))
	}
	if n := e.coord.QueuedWork() - works; n != 2 {
		t.Fatalf("%d checks queued on the group's executor, want 2 (one per member and epoch)", n)
	}
	for i, g := range fr.Groups {
		want := int16(0)
		if i >= 500 {
			want = kerr.StaleMemberEpoch.Code
		}
		if g.Group != "app" || g.ErrorCode != want {
			t.Fatalf("answer %d: %+v, want error %d", i, g, want)
		}
	}
}
