package migration

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/translate"
)

// streamsHeartbeat sends a StreamsGroupHeartbeat of member to group "app"
// (epoch -1: it leaves; 0 with topology: it joins) and wants no error.
func streamsHeartbeat(t *testing.T, c *coordinator.Coordinator, member string, epoch int32, topology []string) {
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
	c.StreamsGroupHeartbeat(hb, coordinator.ClientInfo{ClientID: member}, func(r *kmsg.StreamsGroupHeartbeatResponse) { done <- r })
	if r := <-done; r.ErrorCode != 0 {
		t.Fatalf("streams heartbeat of %s at epoch %d: %d", member, epoch, r.ErrorCode)
	}
}

// call runs one request through the translator; forwarded reports forward.
func call(t *testing.T, tr *translate.Translator, req kmsg.Request) (resp kmsg.Response, forwarded bool) {
	t.Helper()
	ch := make(chan kmsg.Response, 1)
	if !tr.Handle(req, coordinator.ClientInfo{ClientID: "cc", ClientHost: "/127.0.0.1"}, func(r kmsg.Response) { ch <- r }, func(kmsg.Request, func(kmsg.Response)) { ch <- nil }) {
		t.Fatalf("%T not taken", req)
	}
	r := <-ch
	return r, r == nil
}

func streamsJoinRequest(t *testing.T, version int16, memberID string, protocol string) *kmsg.JoinGroupRequest {
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
