package migration

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// describingGroups is an upstream whose group "legacy" is a live, stable
// classic group, and that notes (on the clock) when each takeover attempt
// described it.
type describingGroups struct {
	clock *coordinator.ManualClock
	d     kmsg.DescribeGroupsResponseGroup

	mu sync.Mutex
	at []time.Duration // since the clock's start
}

func (g *describingGroups) DescribeUpstreamGroup(context.Context, string) (kmsg.DescribeGroupsResponseGroup, error) {
	g.mu.Lock()
	g.at = append(g.at, g.clock.Now().Sub(time.Unix(0, 0)))
	g.mu.Unlock()
	return g.d, nil
}

func (g *describingGroups) FenceMembers(context.Context, string, []kmsg.LeaveGroupRequestMember) error {
	return nil
}

func (g *describingGroups) attempts() []time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]time.Duration(nil), g.at...)
}

type noAnchors struct{}

func (noAnchors) Join(context.Context, string) error  { return nil }
func (noAnchors) Leave(context.Context, string) error { return nil }

// A takeover that keeps failing is attempted once per backoff (1 s, 2 s,
// 4 s, then 8 s), in virtual time, however fast its member resends: a
// JOINING Kafka 4.4 member sends its next join as soon as the last is
// answered. Before, every join was an attempt (72 in 0.65 s with a few
// members).
func TestTakeoverAttemptsArePaced(t *testing.T) {
	clock := coordinator.NewManualClock(time.Unix(0, 0))
	c := coordinatorOn(t, clock)
	// The proxy saw none of the members' JoinGroups: their generation is
	// unknown, so every attempt fails (retriable).
	groups := &describingGroups{clock: clock, d: kmsg.DescribeGroupsResponseGroup{Group: "legacy", State: "Stable", ProtocolType: "consumer", Protocol: "stream",
		Members: []kmsg.DescribeGroupsResponseGroupMember{describedMember(t, "a", 0, 1, 2)}}}
	m, err := New(Options{Coordinator: c, Ownership: coordinator.NewOwnership(c, groups, nil), Policy: MigrationConfig{Policy: MigrationBidirectional},
		Groups: groups, Anchors: noAnchors{}})
	if err != nil {
		t.Fatal(err)
	}

	type answer struct {
		code int16
		msg  string
	}
	answers := make(chan answer)
	gone := make(chan struct{})
	t.Cleanup(func() { close(gone) })
	go func() {
		for {
			got := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
			if !m.MaybeTakeOver(firstJoin(), streams.ClientInfo{ClientID: "s1"}, gone, func(r coordinator.HeartbeatResult) { got <- r.Response }) {
				answers <- answer{code: -1}
				return
			}
			select {
			case r := <-got:
				select {
				case answers <- answer{r.ErrorCode, deref(r.ErrorMessage)}:
				case <-gone:
					return
				}
			case <-gone:
				return
			}
		}
	}()

	const want = 6
	for n := 0; n < want; {
		select {
		case a := <-answers:
			if a.code != kerr.CoordinatorLoadInProgress.Code || !strings.Contains(a.msg, "legacy") {
				t.Fatalf("answer %d: code %d %q, want a retriable error naming the group", n, a.code, a.msg)
			}
			n++
		default:
			// Time moves only while the member's join waits (its
			// timer pending beside the group's backoff's forgetting),
			// so the member is never starved.
			if clock.Pending() < 2 {
				runtime.Gosched()
				continue
			}
			if clock.Now().Sub(time.Unix(0, 0)) > time.Minute {
				t.Fatalf("%d answers in a virtual minute, want %d", n, want)
			}
			clock.Advance(100 * time.Millisecond)
		}
	}
	// Each attempt describes the group twice (MaybeTakeOver, then
	// Takeover.Run), at once.
	all := groups.attempts()
	var at []time.Duration
	for i := 0; i < len(all); i += 2 {
		at = append(at, all[i])
	}
	backoffs := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second}
	// Each wait is its backoff less a jitter of up to a fifth
	// (internal/backoff), on a clock moving in steps of 100 ms.
	for i := 1; i < want; i++ {
		if gap, least := at[i]-at[i-1], backoffs[i-1]*4/5; gap < least {
			t.Fatalf("attempt %d came %v after the one before, want at least %v (describes at %v)", i+1, gap, least, all)
		}
	}
}
