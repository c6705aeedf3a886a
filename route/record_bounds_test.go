package route

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A heartbeat whose records Kafka could not write is refused before any
// work for it: no ownership claim, no anchor member upstream.
func TestOversizedHeartbeatRefusedBeforeWork(t *testing.T) {
	e := newEnv(t, direct)
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.EndpointInformationEpoch, req.RebalanceTimeoutMillis = "app", "member-1", -1, 30000
	pid := strings.Repeat("p", 1<<20)
	req.ProcessID = &pid
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{"in"}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	resp := respond[*kmsg.StreamsGroupHeartbeatResponse](e, e.conn(allowAll), req)
	if resp.ErrorCode != kerr.UnknownServerError.Code || resp.ErrorMessage == nil || !strings.Contains(*resp.ErrorMessage, "StreamsGroupMemberMetadata record of") {
		t.Fatalf("error %d %.200v, want UNKNOWN_SERVER_ERROR about the member's record", resp.ErrorCode, resp.ErrorMessage)
	}
	if e.anchors.Running("app") || e.own.Owns("app") {
		t.Fatal("a refused heartbeat started an anchor or claimed the group")
	}
}
