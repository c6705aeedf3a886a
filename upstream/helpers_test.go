package upstream

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// newCoordinator returns a coordinator in virtual time appending to log, with
// topic "foo" of 4 partitions and no initial rebalance delay or assignment
// interval; it loads recs.
func newCoordinator(t *testing.T, log coordinator.Log, recs []streams.Record) *coordinator.Coordinator {
	t.Helper()
	cfg := streams.DefaultConfig()
	cfg.Defaults.InitialRebalanceDelay, cfg.Defaults.AssignmentInterval = 0, 0
	md := coordinator.NewStaticMetadata()
	md.SetTopic("foo", 4)
	clock := coordinator.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c, err := coordinator.New(coordinator.Options{Config: cfg, Clock: clock, Log: log, Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Load(recs); err != nil {
		t.Fatal(err)
	}
	return c
}

// heartbeat sends req to c, waits for the answer and fails the test on an
// error code.
func heartbeat(t *testing.T, c *coordinator.Coordinator, req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	t.Helper()
	ch := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
	c.StreamsGroupHeartbeat(req, streams.ClientInfo{ClientID: "c"}, func(r *kmsg.StreamsGroupHeartbeatResponse) { ch <- r })
	resp := <-ch
	if resp.ErrorCode != 0 {
		msg := "<nil>"
		if resp.ErrorMessage != nil {
			msg = *resp.ErrorMessage
		}
		t.Fatalf("heartbeat %s epoch %d: error %d %s", req.MemberID, req.MemberEpoch, resp.ErrorCode, msg)
	}
	return resp
}

// describe answers StreamsGroupDescribe v1 of groups.
func describe(c *coordinator.Coordinator, groups ...string) []kmsg.StreamsGroupDescribeResponseGroup {
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Version = 1
	req.Groups = groups
	ch := make(chan *kmsg.StreamsGroupDescribeResponse, 1)
	c.StreamsGroupDescribe(req, func(r *kmsg.StreamsGroupDescribeResponse) { ch <- r })
	return (<-ch).Groups
}

// joinReq is a member's first heartbeat, with a topology of one
// subtopology reading topic.
func joinReq(group, member, process, topic string) *kmsg.StreamsGroupHeartbeatRequest {
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID = "0"
	st.SourceTopics = []string{topic}
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	topo.Subtopologies = append(topo.Subtopologies, st)
	r := hbReq(group, member, 0, &ownedTasks{})
	r.EndpointInformationEpoch = -1
	r.RebalanceTimeoutMillis = 300000
	r.Topology = &topo
	r.ProcessID = kmsg.StringPtr(process)
	r.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
	return r
}

// ownedTasks are the task lists a heartbeat reports as owned; a nil list is
// sent empty.
type ownedTasks struct{ active, standby, warmup []kmsg.TaskIDs }

// assigned are the tasks r assigns.
func assigned(r *kmsg.StreamsGroupHeartbeatResponse) *ownedTasks {
	return &ownedTasks{r.ActiveTasks, r.StandbyTasks, r.WarmupTasks}
}

// hbReq is a later heartbeat; owned nil sends no task lists.
func hbReq(group, member string, epoch int32, owned *ownedTasks) *kmsg.StreamsGroupHeartbeatRequest {
	r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	r.Version, r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = 1, group, member, epoch, -1
	if owned != nil {
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = orEmpty(owned.active), orEmpty(owned.standby), orEmpty(owned.warmup)
	}
	return r
}

func orEmpty(ts []kmsg.TaskIDs) []kmsg.TaskIDs {
	if ts == nil {
		return []kmsg.TaskIDs{}
	}
	return ts
}
