package coordinator

import (
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// stateEvents records the group-state events the coordinator tells.
type stateEvents struct {
	mu     sync.Mutex
	states []string
}

func (e *stateEvents) GroupEvent(ev GroupEvent) {
	if ev.Kind != EventGroupState {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	running := ""
	if ev.Fields[FieldTasksRunning] == true {
		running = " running"
	}
	e.states = append(e.states, ev.Group+" "+ev.Fields["state"].(string)+running)
}

// The group's state and whether its tasks run are told when a change
// moves them, and only then: a member joining makes the group reconcile
// (tasks moving), its acknowledgement makes it Stable with every task
// running (what ends a migration step for the app); steady heartbeats
// tell nothing.
func TestGroupStateEvents(t *testing.T) {
	h := newHarness(t, nil)
	ev := &stateEvents{}
	h.c.events = ev
	h.md.SetTopic("foo", 4)
	// Each member heartbeats with what it was last given, as a client
	// does once it revoked and started its tasks.
	resp := map[string]*kmsg.StreamsGroupHeartbeatResponse{}
	owned := map[string]streams.TaskSets{}
	beat := func(m string) {
		var r *kmsg.StreamsGroupHeartbeatResponse
		if resp[m] == nil {
			r = h.ok(joinReq("g", m, "p-"+m, sourceTopology("foo")))
		} else {
			o := owned[m]
			r = h.ok(hbReq("g", m, resp[m].MemberEpoch, &o))
		}
		if got, ok := assigned(r); ok {
			owned[m] = got
		}
		resp[m] = r
	}
	for range 3 {
		beat("m1")
	}
	beat("m2") // the group moves tasks from m1 to m2
	for range 4 {
		beat("m1")
		beat("m2")
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.states) == 0 || ev.states[len(ev.states)-1] != "g Stable running" {
		t.Fatalf("states told %v, want the last Stable with its tasks running", ev.states)
	}
	for i := 1; i < len(ev.states); i++ {
		if ev.states[i] == ev.states[i-1] {
			t.Fatalf("states told %v: a state told twice in a row", ev.states)
		}
	}
	if n := len(ev.states); n < 3 || ev.states[n-3] != "g Stable running" || strings.HasSuffix(ev.states[n-2], " running") {
		t.Fatalf("states told %v, want Stable with tasks running, then the rebalance m2's join started (tasks moving), then Stable with tasks running", ev.states)
	}
}
