package coordinator

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

// simClient is a Streams client as the property test drives it: it owns
// what its last response assigned, revoking at once, like the Java client.
type simClient struct {
	memberID, processID, instanceID string
	epoch                           int32
	joined                          bool
	owned                           streams.TaskSets
}

func propertyTopology() *kmsg.StreamsGroupHeartbeatRequestTopology {
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	a := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	a.SubtopologyID = "0"
	a.SourceTopics = []string{"in"}
	a.RepartitionSinkTopics = []string{"app-rep"}
	a.StateChangelogTopics = []kmsg.TopicInfo{{Topic: "app-s0-changelog"}}
	b := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	b.SubtopologyID = "1"
	b.RepartitionSourceTopics = []kmsg.TopicInfo{{Topic: "app-rep"}}
	t.Subtopologies = append(t.Subtopologies, a, b)
	return &t
}

// TestPropertyRandomHistories drives random joins, heartbeats with and
// without revocation, leaves, static leaves and rejoins, timeouts, metadata
// and config changes, and checks the invariants after every step.
func TestPropertyRandomHistories(t *testing.T) {
	seeds, steps := 60, 400
	if testing.Short() {
		seeds, steps = 10, 200
	}
	coverage := map[string]int{}
	for seed := 0; seed < seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runHistory(t, uint64(seed), steps, coverage) })
	}
	// The histories must reach the interesting states, or the invariants
	// were checked on nothing.
	for _, k := range []string{"Stable", "Reconciling", "Assigning", "Empty", "UNREVOKED_TASKS", "UNRELEASED_TASKS", "err 110", "err 25", "lost response", "created"} {
		if coverage[k] == 0 {
			t.Errorf("no step reached %q: %v", k, coverage)
		}
	}
}

func runHistory(t *testing.T, seed uint64, steps int, coverage map[string]int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	h := newHarness(t, func(c *streams.Config) {
		c.Defaults.InitialRebalanceDelay = time.Duration(rng.IntN(2)) * 3 * time.Second
		c.Defaults.AssignmentInterval = time.Duration(rng.IntN(2)) * time.Second
	})
	h.c.assignor = assignor.StickyTaskAssignor{}
	h.md.SetTopic("in", 4)
	var clients []*simClient
	next := 0
	var log []string
	defer func() {
		if t.Failed() {
			for _, l := range log {
				t.Log(l)
			}
		}
	}()
	send := func(cl *simClient, req *kmsg.StreamsGroupHeartbeatRequest) {
		resp := h.hb(req)
		if req.MemberEpoch > 0 && rng.IntN(20) == 0 {
			// The response is lost: the client retries with what it had.
			log = append(log, fmt.Sprintf("%s epoch %d -> lost response", cl.memberID, req.MemberEpoch))
			return
		}
		log = append(log, fmt.Sprintf("%s epoch %d -> err %d epoch %d", cl.memberID, req.MemberEpoch, resp.ErrorCode, resp.MemberEpoch))
		switch resp.ErrorCode {
		case 0:
		case kerr.FencedMemberEpoch.Code, kerr.UnknownMemberID.Code:
			cl.joined, cl.owned, cl.epoch = false, streams.TaskSets{}, 0
			return
		case kerr.UnreleasedInstanceID.Code:
			return
		default:
			t.Fatalf("%s: unexpected error %d %s", cl.memberID, resp.ErrorCode, deref(resp.ErrorMessage))
		}
		if req.MemberEpoch < 0 {
			cl.joined = false
			cl.owned = streams.TaskSets{}
			return
		}
		cl.joined = true
		cl.epoch = resp.MemberEpoch
		if a, ok := assigned(resp); ok {
			cl.owned = a
		}
	}
	for i := 0; i < steps; i++ {
		switch op := rng.IntN(100); {
		case op < 12 || len(clients) == 0:
			// A new client, or a fenced one rejoining.
			var cl *simClient
			for _, c := range clients {
				if !c.joined && rng.IntN(2) == 0 {
					cl = c
					break
				}
			}
			if cl == nil && len(clients) < 8 {
				next++
				cl = &simClient{memberID: fmt.Sprintf("m%d", next), processID: fmt.Sprintf("p%d", rng.IntN(3))}
				if rng.IntN(3) == 0 {
					cl.instanceID = fmt.Sprintf("i%d", next)
				}
				clients = append(clients, cl)
			}
			if cl == nil {
				continue
			}
			if cl.instanceID != "" && rng.IntN(2) == 0 {
				cl.memberID = fmt.Sprintf("%s-r%d", cl.memberID, i) // a restart under a new member id
			}
			req := joinReq("g", cl.memberID, cl.processID, propertyTopology())
			if cl.instanceID != "" {
				req.InstanceID = strp(cl.instanceID)
			}
			send(cl, req)
		case op < 70:
			cl := clients[rng.IntN(len(clients))]
			if !cl.joined {
				continue
			}
			var owned *streams.TaskSets
			if rng.IntN(3) > 0 {
				o := cl.owned
				owned = &o
			}
			req := hbReq("g", cl.memberID, cl.epoch, owned)
			if cl.instanceID != "" {
				req.InstanceID = strp(cl.instanceID)
			}
			send(cl, req)
		case op < 76:
			cl := clients[rng.IntN(len(clients))]
			if !cl.joined {
				continue
			}
			req := hbReq("g", cl.memberID, -1, nil)
			if cl.instanceID != "" {
				req.InstanceID = strp(cl.instanceID)
				if rng.IntN(2) == 0 {
					req.MemberEpoch = -2
				}
			}
			send(cl, req)
		case op < 88:
			d := time.Duration(rng.IntN(20000)) * time.Millisecond
			log = append(log, fmt.Sprintf("advance %v", d))
			h.advance(d)
		case op < 94:
			switch rng.IntN(7) {
			case 0:
				n := int32(2 + rng.IntN(6))
				log = append(log, fmt.Sprintf("in has %d partitions", n))
				h.md.SetTopic("in", n)
			case 1, 2, 3:
				// Complete pending topic creations with the decided counts.
				h.creator.mu.Lock()
				calls, dones := h.creator.calls, h.creator.dones
				h.creator.calls, h.creator.dones = nil, nil
				h.creator.mu.Unlock()
				for i, c := range calls {
					for _, tp := range c {
						log = append(log, fmt.Sprintf("created %s (%d)", tp.Name, tp.Partitions))
						h.md.SetTopic(tp.Name, tp.Partitions)
					}
					dones[i](nil)
				}
			case 4:
				// An operator deletes the internal topics (after a
				// repartitioning of "in"); the group recreates them.
				log = append(log, "deleted internal topics")
				for _, n := range []string{"app-rep", "app-s0-changelog", "app-s1-changelog"} {
					h.md.DeleteTopic(n)
				}
			case 5, 6:
				n := rng.IntN(3)
				log = append(log, fmt.Sprintf("standbys %d", n))
				if err := h.c.SetGroupConfig("g", &streams.GroupConfigOverride{NumStandbyReplicas: &n}); err != nil {
					t.Fatal(err)
				}
			}
		default:
			// Everyone heartbeats with what it owns, letting the group settle.
			for _, cl := range clients {
				if cl.joined {
					o := cl.owned
					req := hbReq("g", cl.memberID, cl.epoch, &o)
					if cl.instanceID != "" {
						req.InstanceID = strp(cl.instanceID)
					}
					send(cl, req)
				}
			}
		}
		checkInvariants(t, h.group("g"))
		if g := h.group("g"); g != nil {
			for _, m := range g.Members {
				coverage[m.CurrentAssignment().State.String()]++
			}
			coverage[g.State().String()]++
		}
	}
	checkCodecRoundTrip(t, h.log.All())
	for _, l := range log {
		for _, k := range []string{"err 110", "err 25", "lost response", "created"} {
			if strings.Contains(l, k) {
				coverage[k]++
			}
		}
	}
}

func checkInvariants(t *testing.T, g *streams.Group) {
	t.Helper()
	if g == nil {
		return
	}
	if g.AssignmentEpoch > g.GroupEpoch {
		t.Fatalf("assignment epoch %d > group epoch %d", g.AssignmentEpoch, g.GroupEpoch)
	}
	activeOwner := map[streams.TaskID]string{}
	onProcess := map[string]map[streams.TaskID]string{}
	for id, m := range g.Members {
		c := m.CurrentAssignment()
		if c.MemberEpoch > g.GroupEpoch {
			t.Fatalf("member %s epoch %d > group epoch %d", id, c.MemberEpoch, g.GroupEpoch)
		}
		for _, set := range []streams.Tasks{c.Assigned.Active, c.PendingRevocation.Active} {
			streams.ForEachTask(set, func(tk streams.TaskID) {
				if o, ok := activeOwner[tk]; ok && o != id {
					t.Fatalf("active task %v held by %s and %s", tk, o, id)
				}
				activeOwner[tk] = id
			})
		}
		p := m.ProcessID()
		if onProcess[p] == nil {
			onProcess[p] = map[streams.TaskID]string{}
		}
		for role, set := range []streams.Tasks{c.Assigned.Active, c.Assigned.Standby, c.Assigned.Warmup} {
			streams.ForEachTask(set, func(tk streams.TaskID) {
				if o, ok := onProcess[p][tk]; ok {
					t.Fatalf("task %v twice on process %s: %s and %s (role %d)", tk, p, o, id, role)
				}
				onProcess[p][tk] = id
			})
		}
	}
}
