package anchor

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// slowJoins answers every request at once, except the JoinGroups of groups
// named slow-*, which wait until their context ends; it counts heartbeats.
type slowJoins struct {
	mu         sync.Mutex
	heartbeats map[string]int
}

func (f *slowJoins) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		if strings.HasPrefix(r.Group, "slow-") {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		resp := kmsg.NewPtrJoinGroupResponse()
		resp.MemberID, resp.LeaderID, resp.Generation = "anchor-"+r.Group, "anchor-"+r.Group, 1
		return resp, nil
	case *kmsg.SyncGroupRequest:
		return kmsg.NewPtrSyncGroupResponse(), nil
	case *kmsg.HeartbeatRequest:
		f.mu.Lock()
		f.heartbeats[r.Group]++
		f.mu.Unlock()
		return kmsg.NewPtrHeartbeatResponse(), nil
	case *kmsg.LeaveGroupRequest:
		return kmsg.NewPtrLeaveGroupResponse(), nil
	}
	panic("unexpected request")
}

func (f *slowJoins) count(group string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.heartbeats[group]
}

// Joins that hang (an upstream rebalance that does not end) fill the join
// lane, never the heartbeats': the anchors already in their groups keep
// heartbeating.
func TestHangingJoinsDoNotStopHeartbeats(t *testing.T) {
	f := &slowJoins{heartbeats: map[string]int{}}
	m, err := New(Options{Client: f, InstanceID: "streamshift-p1", HeartbeatInterval: 10 * time.Millisecond, MaxInflight: 2, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.Ensure("fast", []string{"a"})
	if _, err := m.Generation(ctx, "fast"); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"slow-1", "slow-2", "slow-3"} {
		m.Ensure(g, []string{"a"})
	}
	seen := f.count("fast")
	for f.count("fast") < seen+20 {
		if ctx.Err() != nil {
			t.Fatalf("the anchor of fast stopped heartbeating while joins hang (%d heartbeats)", f.count("fast"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
