package streams

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

// topicsImage is a metadata image of topics and partition counts.
type topicsImage map[string]int32

func (m topicsImage) Topic(name string) (TopicMetadata, bool) {
	n, ok := m[name]
	return TopicMetadata{Name: name, Partitions: n}, ok
}

func (topicsImage) Version() uint64 { return 1 }

// testChange starts a change of group "g" (g nil: the group does not exist
// yet) as the runtime would, on image, with armed as the timers it has.
func testChange(g *Group, image topicsImage, armed ArmedTimers) *Change {
	return &Change{
		GroupID: "g", Group: g, Config: DefaultConfig().Group("g"), Now: time.UnixMilli(1000),
		Image: image, Assignor: assignor.StickyTaskAssignor{}, Configure: DefaultConfigure,
		CanCreateTopics: true, DebugWanted: true, Wall: time.Now, Pending: armed,
	}
}

// testTimers are the timers a test's changes armed.
type testTimers map[TimerKey]bool

func (tt testTimers) HasTimer(k TimerKey) bool { return tt[k] }

// runHeartbeats runs heartbeats of group "g", each as a change of its own
// on an image where the topology's topics exist, and returns the records
// they wrote.
func runHeartbeats(t *testing.T, reqs ...*kmsg.StreamsGroupHeartbeatRequest) []Record {
	t.Helper()
	var g *Group
	armed := testTimers{}
	var recs []Record
	for _, r := range reqs {
		ch := testChange(g, topicsImage{"foo": 4, "app-store-changelog": 4}, armed)
		if resp := ch.StreamsGroupHeartbeat(r, ClientInfo{}); resp.ErrorCode != 0 || ch.Outcome != OutcomeCommit {
			t.Fatalf("heartbeat %+v: %+v", r, resp)
		}
		for _, op := range ch.Timers {
			armed[op.Key] = op.Fire != nil
		}
		recs = append(recs, ch.Records...)
		g = ch.Group
	}
	return recs
}

// joinRequest is the first heartbeat of a member with a stateful topology
// reading foo (its changelog app-store-changelog).
func joinRequest(member, process string) *kmsg.StreamsGroupHeartbeatRequest {
	return &kmsg.StreamsGroupHeartbeatRequest{
		Version: 1, Group: "g", MemberID: member, EndpointInformationEpoch: -1, RebalanceTimeoutMillis: 300000,
		ProcessID: &process, ClientTags: []kmsg.StreamsGroupHeartbeatRequestClientTag{},
		ActiveTasks: []kmsg.TaskIDs{}, StandbyTasks: []kmsg.TaskIDs{}, WarmupTasks: []kmsg.TaskIDs{},
		Topology: &kmsg.StreamsGroupHeartbeatRequestTopology{Subtopologies: []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{{
			SubtopologyID: "0", SourceTopics: []string{"foo"},
			StateChangelogTopics: []kmsg.TopicInfo{{Topic: "app-store-changelog", Configs: []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "compact"}}}},
		}}},
	}
}

// leaveRequest is a member's leave (member epoch -1).
func leaveRequest(member string) *kmsg.StreamsGroupHeartbeatRequest {
	return &kmsg.StreamsGroupHeartbeatRequest{Version: 1, Group: "g", MemberID: member, MemberEpoch: -1, RebalanceTimeoutMillis: -1}
}

// TestHeartbeatReturnsItsEffects runs the first join of a group on a Change,
// with no runtime: the operation does no I/O, it returns its records, its
// answer and what the runtime is to do, as values.
func TestHeartbeatReturnsItsEffects(t *testing.T) {
	ch := testChange(nil, topicsImage{"foo": 4}, nil)
	resp := ch.StreamsGroupHeartbeat(joinRequest("m1", "p1"), ClientInfo{ClientID: "c"})
	if resp.ErrorCode != 0 || resp.MemberID != "m1" {
		t.Fatalf("answer: %+v", resp)
	}
	if ch.Outcome != OutcomeCommit || !ch.Created || ch.Group == nil || len(ch.Records) == 0 {
		t.Fatalf("outcome %v, created %v, group %v, %d records", ch.Outcome, ch.Created, ch.Group, len(ch.Records))
	}
	if !ch.hasTimer(sessionTimerKey("m1")) {
		t.Errorf("no session timer armed: %+v", ch.Timers)
	}
	if len(ch.Topics) != 1 || len(ch.Topics[0]) != 1 || ch.Topics[0][0].Name != "app-store-changelog" || ch.Topics[0][0].Partitions != 4 {
		t.Errorf("topics to create: %+v", ch.Topics)
	}
	if len(ch.Refresh) == 0 {
		t.Error("no metadata refresh asked for the topology's topics")
	}
	var bumped bool
	for _, e := range ch.Logs {
		bumped = bumped || strings.HasPrefix(e.Format, "[GroupId %s][MemberId %s] Bumped streams group epoch")
	}
	if !bumped {
		t.Errorf("no epoch bump among the log entries %+v", ch.Logs)
	}
}
