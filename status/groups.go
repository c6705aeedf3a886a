package status

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Group is a group as the status page and /api/groups show it: a group the
// coordinator serves, or one it served during a migration (Served false once
// handed back to the upstream).
type Group struct {
	ID     string `json:"groupId"`
	Served bool   `json:"served"`
	// State, GroupEpoch, AssignmentEpoch and TopologyEpoch are
	// StreamsGroupDescribe's, of a served group.
	State           string `json:"state,omitempty"`
	GroupEpoch      int32  `json:"groupEpoch"`
	AssignmentEpoch int32  `json:"assignmentEpoch"`
	TopologyEpoch   int32  `json:"topologyEpoch"`
	// Migration is the group's last migration phase, if it had one.
	Migration *Phase   `json:"migration,omitempty"`
	Members   []Member `json:"members"`
	// FlightRecorder is the admin path of the group's flight recorder,
	// when it has one.
	FlightRecorder string `json:"flightRecorder,omitempty"`
	// Owner is where the group is served among the instances sharing the
	// durable group log (absent without it).
	Owner *GroupOwner `json:"owner,omitempty"`
}

// Member is one member of a served group.
type Member struct {
	MemberID string `json:"memberId"`
	// Protocol is "classic" for a classic member served through
	// translation, "streams" otherwise.
	Protocol string `json:"protocol"`
	// MemberEpoch is the member epoch; a classic member's generation is it.
	MemberEpoch int32    `json:"memberEpoch"`
	ProcessID   string   `json:"processId"`
	ClientID    string   `json:"clientId"`
	ClientHost  string   `json:"clientHost"`
	InstanceID  *string  `json:"instanceId,omitempty"`
	Active      []string `json:"activeTasks"`
	Standby     []string `json:"standbyTasks"`
	Warmup      []string `json:"warmupTasks"`
	// Lag is the sum over the member's tasks of changelog end offset minus
	// its offset: for a standby or warm-up task, the end any member reported
	// (TaskEndOffsets: the active owner's) minus this member's TaskOffsets;
	// an active task without an offset of its own counts 0 (its owner writes
	// the changelog). Nil until a report gives one term (Kafka Streams
	// reports every task.offset.interval.ms; a classic member never does).
	Lag *int64 `json:"lag,omitempty"`
}

// EpochName is how Kafka names the member's epoch in its protocol.
func (m Member) EpochName() string {
	if m.Protocol == "classic" {
		return "generation"
	}
	return "member epoch"
}

// groups reads the served groups (all, or the one id) and joins them with
// the migration phases: a group in a migration that is no longer served is
// listed too.
func (s *Server) groups(ctx context.Context, id string) ([]Group, error) {
	var ids []string
	if id != "" {
		ids = []string{id}
	} else {
		listed, err := listGroups(ctx, s.coord)
		if err != nil {
			return nil, err
		}
		for _, g := range listed {
			ids = append(ids, g.GroupID)
		}
	}
	described, err := describeGroups(ctx, s.coord, ids)
	if err != nil {
		return nil, err
	}
	phases := s.events.phases()
	flights := map[string]bool{}
	if s.flights != nil {
		for _, g := range s.flights() {
			flights[g] = true
		}
	}
	byID := map[string]*Group{}
	var out []Group
	if id == "" {
		served := map[string]bool{}
		for _, d := range described {
			served[d.Group] = d.ErrorCode == 0
		}
		s.events.forget(served)
	}
	for _, d := range described {
		if d.ErrorCode == kerr.GroupIDNotFound.Code {
			continue
		}
		if d.ErrorCode != 0 {
			return nil, fmt.Errorf("describe group %s: %w", d.Group, kerr.ErrorForCode(d.ErrorCode))
		}
		out = append(out, fromDescribed(d))
	}
	for i := range out {
		byID[out[i].ID] = &out[i]
	}
	for gid := range phases {
		if id != "" && gid != id {
			continue
		}
		if byID[gid] == nil {
			out = append(out, Group{ID: gid, Members: []Member{}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	var cv ClusterView
	if s.cluster != nil {
		cv = s.cluster.View()
	}
	for i := range out {
		if s.cluster != nil {
			out[i].Owner = cv.groupOwner(s.cluster, out[i].ID)
		}
		if p, ok := phases[out[i].ID]; ok {
			out[i].Migration = &p
		}
		if flights[out[i].ID] {
			out[i].FlightRecorder = "/capture/groups/" + out[i].ID + "/flight-recorder"
		}
	}
	return out, nil
}

func fromDescribed(d kmsg.StreamsGroupDescribeResponseGroup) Group {
	g := Group{ID: d.Group, Served: true, State: d.State, GroupEpoch: d.Epoch, AssignmentEpoch: d.AssignmentEpoch, Members: []Member{}}
	if d.Topology != nil {
		g.TopologyEpoch = d.Topology.Epoch
	}
	ends := groupEndOffsets(d.Members)
	for _, m := range d.Members {
		mm := Member{MemberID: m.MemberID, Protocol: "streams", MemberEpoch: m.MemberEpoch, ProcessID: m.ProcessID,
			ClientID: m.ClientID, ClientHost: m.ClientHost, InstanceID: m.InstanceID,
			Active: taskNames(m.Assignment.ActiveTasks), Standby: taskNames(m.Assignment.StandbyTasks), Warmup: taskNames(m.Assignment.WarmupTasks)}
		if m.IsClassic {
			mm.Protocol = "classic"
		}
		mm.Lag = lag(m, ends)
		g.Members = append(g.Members, mm)
	}
	sort.Slice(g.Members, func(i, j int) bool {
		return g.Members[i].ClientID+g.Members[i].MemberID < g.Members[j].ClientID+g.Members[j].MemberID
	})
	return g
}

// taskNames names tasks as Kafka Streams does: subtopology_partition.
func taskNames(ts []kmsg.TaskIDs) []string {
	out := []string{}
	for _, t := range ts {
		for _, p := range t.Partitions {
			out = append(out, fmt.Sprintf("%s_%d", t.SubtopologyID, p))
		}
	}
	slices.Sort(out)
	return out
}

// taskKey is a task as TaskOffsets name it.
type taskKey struct {
	st string
	p  int32
}

// groupEndOffsets are the largest changelog end offsets any member reported
// per task: a changelog's end is the same for every reader, and it is the
// active owner that reports it (a standby or warm-up reports its offset).
func groupEndOffsets(members []kmsg.StreamsGroupDescribeResponseGroupMember) map[taskKey]int64 {
	out := map[taskKey]int64{}
	for _, m := range members {
		for _, e := range m.TaskEndOffsets {
			if e.Offset < 0 || e.Offset == math.MaxInt64 {
				continue // unknown, or an overflowed sum
			}
			k := taskKey{e.SubtopologyID, e.Partition}
			if cur, ok := out[k]; !ok || e.Offset > cur {
				out[k] = e.Offset
			}
		}
	}
	return out
}

// lag sums, over the member's tasks whose end is known, end minus the
// member's offset; an active task without an offset of its own counts 0.
func lag(m kmsg.StreamsGroupDescribeResponseGroupMember, ends map[taskKey]int64) *int64 {
	own := map[taskKey]int64{}
	for _, o := range m.TaskOffsets {
		own[taskKey{o.SubtopologyID, o.Partition}] = o.Offset
	}
	var sum int64
	known := false
	add := func(ts []kmsg.TaskIDs, active bool) {
		for _, t := range ts {
			for _, p := range t.Partitions {
				k := taskKey{t.SubtopologyID, p}
				end, ok := ends[k]
				if !ok {
					continue
				}
				if off, ok := own[k]; ok && off >= 0 {
					sum += max(end-off, 0)
					known = true
				} else if active {
					known = true
				}
			}
		}
	}
	add(m.Assignment.ActiveTasks, true)
	add(m.Assignment.StandbyTasks, false)
	add(m.Assignment.WarmupTasks, false)
	if !known {
		return nil
	}
	return &sum
}

// Phase is a group's migration phase, from the migration's events.
type Phase struct {
	// Kind is takeover or hand-back.
	Kind string `json:"kind"`
	// State is running, done or failed.
	State  string    `json:"state"`
	Since  time.Time `json:"since"`
	Took   string    `json:"took,omitempty"`
	Reason string    `json:"reason,omitempty"`
}

// Title is the phase as the page says it.
func (p Phase) Title() string {
	switch {
	case p.Kind == "takeover" && p.State == "done":
		return "taken over from the upstream"
	case p.Kind == "hand-back" && p.State == "done":
		return "handed back to the upstream"
	}
	return p.Kind + " " + p.State
}
