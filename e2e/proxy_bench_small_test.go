//go:build e2e

package e2e_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The small-request cost of TestProxyBenchmark: the proxy process's CPU
// seconds (/proc, user+system) over n requests of one kind sent back to back
// on one connection, one in flight, divided by n. Per request, not per byte:
// what a proxy spends on the control traffic of many small clients, which
// machine load hardly moves. The requests are encoded with kmsg and written
// on a plain TCP connection, so both proxies get the same bytes and no client
// library decides where they go (with one broker every connection reaches
// it; streamshift answers StreamsGroupHeartbeat itself on any connection).

// smallConn is one connection that sends a request and reads its response.
type smallConn struct {
	c    net.Conn
	r    *bufio.Reader
	f    *kmsg.RequestFormatter
	corr int32
	buf  []byte
}

func dialSmall(addr string) (*smallConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &smallConn{c: c, r: bufio.NewReader(c), f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench-small"))}, nil
}

// do sends req and decodes its response into resp (req's version).
func (sc *smallConn) do(req kmsg.Request) (kmsg.Response, error) {
	sc.corr++
	sc.buf = sc.f.AppendRequest(sc.buf[:0], req, sc.corr)
	_ = sc.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := sc.c.Write(sc.buf); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(sc.r, size[:]); err != nil {
		return nil, fmt.Errorf("%s: %w", kmsg.NameForKey(req.Key()), err)
	}
	msg := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(sc.r, msg); err != nil {
		return nil, err
	}
	if corr := int32(binary.BigEndian.Uint32(msg)); corr != sc.corr {
		return nil, fmt.Errorf("correlation id %d, want %d", corr, sc.corr)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	body := msg[4:]
	if resp.IsFlexible() {
		body = body[1:] // no header tags in any broker or proxy answer
	}
	return resp, resp.ReadFrom(body)
}

func (sc *smallConn) close() { _ = sc.c.Close() }

// smallRequests are the kinds measured, each a setup (a group to heartbeat
// in) and the request sent n times.
type smallRequest struct {
	name string
	// setup gets the route's topic and a group name of the round's own (a
	// member left from an earlier round would hold up a classic join).
	setup func(sc *smallConn, topic, group string) (next func() (kmsg.Request, func(kmsg.Response) error), err error)
}

var smallRequests = []smallRequest{
	{"Metadata", func(sc *smallConn, topic, _ string) (func() (kmsg.Request, func(kmsg.Response) error), error) {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(topic)
		req.Topics = []kmsg.MetadataRequestTopic{t}
		check := func(r kmsg.Response) error {
			m := r.(*kmsg.MetadataResponse)
			if len(m.Topics) != 1 || m.Topics[0].ErrorCode != 0 || len(m.Brokers) != 1 {
				return fmt.Errorf("metadata: %d topics, %d brokers", len(m.Topics), len(m.Brokers))
			}
			return nil
		}
		return func() (kmsg.Request, func(kmsg.Response) error) { return req, check }, nil
	}},
	{"Heartbeat", func(sc *smallConn, _, group string) (func() (kmsg.Request, func(kmsg.Response) error), error) {
		member, gen, err := joinClassic(sc, group)
		if err != nil {
			return nil, err
		}
		req := kmsg.NewPtrHeartbeatRequest()
		req.Version, req.Group, req.Generation, req.MemberID = 4, group, gen, member
		check := func(r kmsg.Response) error { return kerr.ErrorForCode(r.(*kmsg.HeartbeatResponse).ErrorCode) }
		return func() (kmsg.Request, func(kmsg.Response) error) { return req, check }, nil
	}},
	{"StreamsGroupHeartbeat", func(sc *smallConn, topic, group string) (func() (kmsg.Request, func(kmsg.Response) error), error) {
		join := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		join.Version, join.Group, join.MemberID = 0, group, "small-member-"+group
		join.EndpointInformationEpoch, join.RebalanceTimeoutMillis = -1, 300000
		st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		st.SubtopologyID, st.SourceTopics = "0", []string{topic}
		topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
		join.Topology = &topo
		join.ProcessID = kmsg.StringPtr("small-process")
		join.ActiveTasks, join.StandbyTasks, join.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		join.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
		var jr *kmsg.StreamsGroupHeartbeatResponse
		err := coordinatorReady(func() (int16, error) {
			r, err := sc.do(join)
			if err != nil {
				return 0, err
			}
			jr = r.(*kmsg.StreamsGroupHeartbeatResponse)
			return jr.ErrorCode, nil
		})
		if err != nil {
			return nil, fmt.Errorf("streams group join: %w", err)
		}
		epoch := jr.MemberEpoch
		hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		hb.Version, hb.Group, hb.MemberID, hb.RebalanceTimeoutMillis, hb.EndpointInformationEpoch = 0, group, join.MemberID, -1, -1
		check := func(r kmsg.Response) error {
			resp := r.(*kmsg.StreamsGroupHeartbeatResponse)
			epoch = resp.MemberEpoch
			return kerr.ErrorForCode(resp.ErrorCode)
		}
		return func() (kmsg.Request, func(kmsg.Response) error) { hb.MemberEpoch = epoch; return hb, check }, nil
	}},
}

// joinClassic joins group as its only member (JoinGroup twice: the first
// answers MEMBER_ID_REQUIRED, then SyncGroup) and returns member and
// generation for heartbeats.
func joinClassic(sc *smallConn, group string) (string, int32, error) {
	// FindCoordinator first: on a fresh broker it creates __consumer_offsets,
	// which JoinGroup alone does not.
	find := kmsg.NewPtrFindCoordinatorRequest()
	find.Version, find.CoordinatorKeys = 4, []string{group}
	if err := coordinatorReady(func() (int16, error) {
		r, err := sc.do(find)
		if err != nil {
			return 0, err
		}
		if cs := r.(*kmsg.FindCoordinatorResponse).Coordinators; len(cs) == 1 {
			return cs[0].ErrorCode, nil
		}
		return 0, fmt.Errorf("find coordinator: no answer for %s", group)
	}); err != nil {
		return "", 0, fmt.Errorf("find coordinator: %w", err)
	}
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis, join.ProtocolType = 9, group, 45000, 60000, "consumer"
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{}}}
	var jr *kmsg.JoinGroupResponse
	err := coordinatorReady(func() (int16, error) {
		r, err := sc.do(join)
		if err != nil {
			return 0, err
		}
		jr = r.(*kmsg.JoinGroupResponse)
		if jr.ErrorCode == kerr.MemberIDRequired.Code {
			join.MemberID = jr.MemberID
			return kerr.CoordinatorLoadInProgress.Code, nil // again, now with the id
		}
		return jr.ErrorCode, nil
	})
	if err != nil {
		return "", 0, fmt.Errorf("join group: %w", err)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group, sync.Generation, sync.MemberID = 5, group, jr.Generation, jr.MemberID
	sync.ProtocolType, sync.Protocol = kmsg.StringPtr("consumer"), jr.Protocol
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: jr.MemberID, MemberAssignment: []byte{}}}
	r, err := sc.do(sync)
	if err != nil {
		return "", 0, err
	}
	if err := kerr.ErrorForCode(r.(*kmsg.SyncGroupResponse).ErrorCode); err != nil {
		return "", 0, fmt.Errorf("sync group: %w", err)
	}
	return jr.MemberID, jr.Generation, nil
}

// coordinatorReady retries try while it answers that the group coordinator
// is not there yet (untilCoordinator): the first group of a fresh broker
// creates __consumer_offsets, and streamshift's coordinator starts in the
// background. Any other error code is returned as the error.
func coordinatorReady(try func() (int16, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := untilCoordinator(ctx, func() (aclAnswer, error) {
		code, err := try()
		return aclAnswer{Code: code}, err
	})
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(a.Code)
}

// smallRequestCost sends n requests of kind k through the route and returns
// the proxy's CPU microseconds per request and the round trip's mean in µs.
func smallRequestCost(t *testing.T, r benchRoute, k smallRequest, topic, group string, n int) (cpuMicros, rttMicros float64, err error) {
	sc, err := dialSmall(r.addr)
	if err != nil {
		return 0, 0, err
	}
	defer sc.close()
	next, err := k.setup(sc, topic, group)
	if err != nil {
		return 0, 0, err
	}
	for range 100 { // warm-up: the proxy's first decode of the kind, the broker's caches
		req, check := next()
		resp, err := sc.do(req)
		if err == nil {
			err = check(resp)
		}
		if err != nil {
			return 0, 0, err
		}
	}
	cpu0, start := r.proxy.cpuSeconds(t), time.Now()
	for i := 0; i < n; i++ {
		req, check := next()
		resp, err := sc.do(req)
		if err == nil {
			err = check(resp)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("request %d: %w", i, err)
		}
	}
	elapsed := time.Since(start)
	return (r.proxy.cpuSeconds(t) - cpu0) * 1e6 / float64(n), float64(elapsed.Microseconds()) / float64(n), nil
}
