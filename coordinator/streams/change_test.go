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

// TestHeartbeatReturnsItsEffects runs the first join of a group on a Change,
// with no runtime: the operation does no I/O, it returns its records, its
// answer and what the runtime is to do, as values.
func TestHeartbeatReturnsItsEffects(t *testing.T) {
	ch := &Change{
		GroupID: "g", Config: DefaultConfig().Group("g"), Now: time.UnixMilli(1000),
		Image: topicsImage{"foo": 4}, Assignor: assignor.StickyTaskAssignor{}, Configure: DefaultConfigure,
		CanCreateTopics: true, DebugWanted: true, Wall: time.Now,
	}
	process := "p1"
	join := &kmsg.StreamsGroupHeartbeatRequest{
		Version: 1, Group: "g", MemberID: "m1", EndpointInformationEpoch: -1, RebalanceTimeoutMillis: 300000,
		ProcessID: &process, ClientTags: []kmsg.StreamsGroupHeartbeatRequestClientTag{},
		ActiveTasks: []kmsg.TaskIDs{}, StandbyTasks: []kmsg.TaskIDs{}, WarmupTasks: []kmsg.TaskIDs{},
		Topology: &kmsg.StreamsGroupHeartbeatRequestTopology{Subtopologies: []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{{
			SubtopologyID: "0", SourceTopics: []string{"foo"},
			StateChangelogTopics: []kmsg.TopicInfo{{Topic: "app-store-changelog"}},
		}}},
	}
	resp := ch.StreamsGroupHeartbeat(join, ClientInfo{ClientID: "c"})
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
