package coordinator

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

func TestGroupMaxSize(t *testing.T) {
	h := newHarness(t, func(c *streams.Config) { c.MaxGroupSize = 1 })
	h.md.SetTopic("foo", 2)
	r := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	wantError(t, h.hb(joinReq("g", "m2", "p2", sourceTopology("foo"))), kerr.GroupMaxSizeReached)
	// A known member may rejoin.
	h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	_ = r
}

func TestHandleOtherKeys(t *testing.T) {
	h := newHarness(t, nil)
	if h.c.Handle(kmsg.NewPtrJoinGroupRequest(), streams.ClientInfo{}, func(kmsg.Response) { t.Fatal("responded") }) {
		t.Fatal("took a JoinGroup")
	}
	var got kmsg.Response
	if !h.c.Handle(kmsg.NewPtrStreamsGroupDescribeRequest(), streams.ClientInfo{}, func(r kmsg.Response) { got = r }) || got == nil {
		t.Fatal("describe not served")
	}
}

// A failed append leaves the group as the log has it and answers
// COORDINATOR_NOT_AVAILABLE, so the client retries.
func TestAppendFailureRollsBack(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 2)
	r := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	before := fmt.Sprintf("%+v", snapshot(h.group("g")))
	h.log.fail = errors.New("disk on fire")
	resp := h.hb(joinReq("g", "m2", "p2", sourceTopology("foo")))
	wantError(t, resp, kerr.CoordinatorNotAvailable)
	h.log.fail = nil
	if after := fmt.Sprintf("%+v", snapshot(h.group("g"))); after != before {
		t.Fatalf("state changed by a failed append:\n%s\n%s", before, after)
	}
	h.ok(hbReq("g", "m1", r.MemberEpoch, nil))
	// The very first heartbeat of a group failing leaves no group.
	h.log.fail = errors.New("still on fire")
	wantError(t, h.hb(joinReq("g2", "m1", "p1", sourceTopology("foo"))), kerr.CoordinatorNotAvailable)
	if h.group("g2") != nil {
		t.Fatal("group created by a failed append")
	}
}

// TestConcurrentGroups drives many groups from many goroutines through the
// asynchronous entry point with the system clock (run it with -race).
func TestConcurrentGroups(t *testing.T) {
	md := NewStaticMetadata()
	md.SetTopic("foo", 8)
	cfg := streams.DefaultConfig()
	cfg.Defaults.InitialRebalanceDelay = 0
	cfg.Defaults.AssignmentInterval = 0
	c, err := New(Options{Config: cfg, Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	call := func(req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
		ch := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
		c.StreamsGroupHeartbeat(req, streams.ClientInfo{ClientID: "c"}, func(r *kmsg.StreamsGroupHeartbeatResponse) { ch <- r })
		select {
		case r := <-ch:
			return r
		case <-time.After(10 * time.Second):
			t.Error("no response")
			return nil
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		for m := 0; m < 4; m++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				group, member := fmt.Sprintf("g%d", g), fmt.Sprintf("m%d", m)
				r := call(joinReq(group, member, fmt.Sprintf("p%d", m), sourceTopology("foo")))
				if r == nil || r.ErrorCode != 0 {
					t.Errorf("join %s/%s: %+v", group, member, r)
					return
				}
				owned, _ := assigned(r)
				epoch := r.MemberEpoch
				for i := 0; i < 30; i++ {
					r = call(hbReq(group, member, epoch, &owned))
					if r == nil || r.ErrorCode != 0 {
						t.Errorf("heartbeat %s/%s: %+v", group, member, r)
						return
					}
					epoch = r.MemberEpoch
					if a, ok := assigned(r); ok {
						owned = a
					}
				}
			}()
		}
	}
	wg.Wait()
	lg := make(chan []ListedGroup, 1)
	c.ListGroups(nil, func(l []ListedGroup) { lg <- l })
	if l := <-lg; len(l) != 8 {
		t.Errorf("listed %d groups", len(l))
	}
	// No task is owned twice; a stable group owns all 8.
	for g := 0; g < 8; g++ {
		ch := make(chan *kmsg.StreamsGroupDescribeResponse, 1)
		req := kmsg.NewPtrStreamsGroupDescribeRequest()
		req.Groups = []string{fmt.Sprintf("g%d", g)}
		c.StreamsGroupDescribe(req, func(r *kmsg.StreamsGroupDescribeResponse) { ch <- r })
		d := <-ch
		seen := map[streams.TaskID]bool{}
		for _, m := range d.Groups[0].Members {
			streams.ForEachTask(streams.TasksFromKmsg(m.Assignment.ActiveTasks), func(tk streams.TaskID) {
				if seen[tk] {
					t.Errorf("group g%d: task %v owned twice", g, tk)
				}
				seen[tk] = true
			})
		}
		if st := d.Groups[0].State; (st == "Stable" && len(seen) != 8) || (st != "Stable" && st != "Reconciling") {
			t.Errorf("group g%d: state %s, %d active tasks", g, st, len(seen))
		}
	}
}

func TestListGroups(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 2)
	h.ok(joinReq("b", "m1", "p1", sourceTopology("foo")))
	h.ok(joinReq("a", "m1", "p1", sourceTopology("absent")))
	h.ok(joinReq("c", "m1", "p1", sourceTopology("foo")))
	h.ok(hbReq("c", "m1", -1, nil))
	list := func(states ...string) []ListedGroup {
		var got []ListedGroup
		h.c.ListGroups(states, func(l []ListedGroup) { got = l })
		return got
	}
	all := list()
	if len(all) != 3 || all[0].GroupID != "a" || all[0].State != streams.GroupNotReady || all[1].State != streams.GroupStable || all[2].State != streams.GroupEmpty {
		t.Fatalf("all: %+v", all)
	}
	if got := list("not_ready", "EMPTY"); len(got) != 2 || got[0].GroupID != "a" || got[1].GroupID != "c" {
		t.Fatalf("filtered: %+v", got)
	}
}
