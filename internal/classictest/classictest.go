// Package classictest is what the tests of translate and migration share: a
// streams group in virtual time, and classic Kafka Streams members'
// requests against it. Only tests import it.
// It owns no behaviour of its own: everything it drives is the
// coordinator's and classicstreams'.
package classictest

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// StreamsGroup is a real coordinator (asynchronous, on a virtual clock)
// with a streams member "s1" holding the 4 tasks of "foo" in group "app",
// no initial rebalance delay and no assignment interval. It is closed when
// the test ends.
func StreamsGroup(t testing.TB) (*coordinator.Coordinator, *coordinator.ManualClock) {
	t.Helper()
	clock := coordinator.NewManualClock(time.Unix(0, 0))
	md := coordinator.NewStaticMetadata()
	md.SetTopic("foo", 4)
	cfg := streams.DefaultConfig()
	cfg.Defaults.InitialRebalanceDelay = 0
	cfg.Defaults.AssignmentInterval = 0
	c, err := coordinator.New(coordinator.Options{Config: cfg, Clock: clock, Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	StreamsHeartbeat(t, c, "s1", 0, []string{"foo"})
	return c, clock
}

// MemberIDs gives out the member ids "<client id>-id1", "<client id>-id2",
// ... (a translator's NewMemberID).
func MemberIDs() func(clientID string) string {
	n := 0
	return func(client string) string { n++; return client + "-id" + string(rune('0'+n)) }
}

// StreamsHeartbeat sends a StreamsGroupHeartbeat of member to group "app"
// (epoch -1: it leaves; 0 with topology: it joins) and wants no error.
func StreamsHeartbeat(t testing.TB, c *coordinator.Coordinator, member string, epoch int32, topology []string) {
	t.Helper()
	hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.MemberEpoch = 1, "app", member, epoch
	if topology != nil {
		hb.RebalanceTimeoutMillis, hb.EndpointInformationEpoch = 60000, -1
		p := "p-" + member
		hb.ProcessID = &p
		topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		st.SubtopologyID, st.SourceTopics = "0", topology
		topo.Subtopologies = append(topo.Subtopologies, st)
		hb.Topology = &topo
		hb.ActiveTasks, hb.StandbyTasks, hb.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		hb.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
	}
	done := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
	c.StreamsGroupHeartbeat(hb, streams.ClientInfo{ClientID: member}, func(r *kmsg.StreamsGroupHeartbeatResponse) { done <- r })
	if r := <-done; r.ErrorCode != 0 {
		t.Fatalf("streams heartbeat of %s at epoch %d: %d", member, epoch, r.ErrorCode)
	}
}

// Call runs one request through handle (a translator's Handle) for client
// "cc"; forwarded reports that it went to forward instead of an answer.
func Call[F ~func(kmsg.Request, func(kmsg.Response))](t testing.TB, handle func(kmsg.Request, streams.ClientInfo, func(kmsg.Response), F) bool, req kmsg.Request) (resp kmsg.Response, forwarded bool) {
	t.Helper()
	ch := make(chan kmsg.Response, 1)
	if !handle(req, streams.ClientInfo{ClientID: "cc", ClientHost: "/127.0.0.1"}, func(r kmsg.Response) { ch <- r }, F(func(kmsg.Request, func(kmsg.Response)) { ch <- nil })) {
		t.Fatalf("%T not taken", req)
	}
	r := <-ch
	return r, r == nil
}

// JoinRequest is a classic Kafka Streams member's JoinGroup of group "app"
// subscribed to "foo", with a 10 s session and a 60 s rebalance timeout.
func JoinRequest(t testing.TB, version int16, memberID string, protocol string) *kmsg.JoinGroupRequest {
	t.Helper()
	info := &classicstreams.SubscriptionInfo{Version: 11, LatestSupportedVersion: 11, UserEndPoint: "h:1"}
	ud, err := info.Encode()
	if err != nil {
		t.Fatal(err)
	}
	sub := &classicstreams.ConsumerSubscription{Version: 3, Topics: []string{"foo"}, UserData: ud, GenerationID: -1}
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.MemberID = version, "app", memberID
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 60000
	req.ProtocolType = "consumer"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: protocol, Metadata: sub.Encode()}}
	return req
}
