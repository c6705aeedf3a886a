package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consume reads n records of topic from its start through bootstrap.
func consume(ctx context.Context, t *testing.T, bootstrap, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume %s: %d of %d records: %v", topic, len(out), n, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		out = append(out, fs.Records()...)
	}
	return out
}

// joinStreamsGroup joins group with a hand-written StreamsGroupHeartbeat
// (one subtopology reading topic) through cl and heartbeats until the
// member owns its tasks, which it returns.
func joinStreamsGroup(ctx context.Context, t *testing.T, cl *kgo.Client, group, topic string) []kmsg.TaskIDs {
	t.Helper()
	broker := cl.Broker(int(findCoordinatorWith(t, ctx, cl, group).NodeID))

	req := streamsJoin(group, "demo-member", topic)
	var owned []kmsg.TaskIDs
	for {
		resp, err := req.RequestWith(ctx, broker)
		if err != nil {
			t.Fatalf("StreamsGroupHeartbeat through the demo: %v", err)
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			t.Fatalf("StreamsGroupHeartbeat: %v %s", err, deref(resp.ErrorMessage))
		}
		if resp.ActiveTasks != nil {
			owned = resp.ActiveTasks
		}
		if len(owned) > 0 && len(resp.Status) == 0 {
			return owned
		}
		if ctx.Err() != nil {
			t.Fatalf("never assigned tasks: last response %+v", resp)
		}
		time.Sleep(100 * time.Millisecond)
		req = streamsHeartbeat(group, req.MemberID, resp.MemberEpoch, owned)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
