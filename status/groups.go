package status

import (
	"context"
	"fmt"
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
	// Observed is set ("observed, classic on the broker") for a classic
	// Kafka Streams group streamshift does not serve but whose classic
	// members it observes (the migration on): State is then the broker's
	// classic group state, and the members are the broker's (observed.go).
	Observed string `json:"observed,omitempty"`
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
	// Label names the member as a person recognises it, as the capture's
	// timeline does: host/processUUID[:8] thread N ("" when its client id
	// and process id name no Kafka Streams process).
	Label string `json:"label,omitempty"`
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
	// Lag is the sum of the member's task lags (Tasks) that are known; nil
	// (shown "–") when none is, and LagWhy says why.
	Lag    *int64 `json:"lag,omitempty"`
	LagWhy string `json:"lagWhy,omitempty"`
	// LagSource is "measured" when every task lag in the sum was measured
	// by streamshift (committed offsets against end offsets), "reported"
	// when any is a member's report (then LagAge says how old).
	LagSource string `json:"lagSource,omitempty"`
	// LagReportedAt is when the member last reported offsets (a streams
	// member every task.offset.interval.ms, a classic member at each
	// JoinGroup); LagAge is how long ago that was, as the page says it.
	LagReportedAt *time.Time `json:"lagReportedAt,omitempty"`
	LagAge        string     `json:"lagAge,omitempty"`
	// Tasks are the member's tasks with their lag (lag.go).
	Tasks []TaskLag `json:"tasks"`
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
	inputs := s.lagInputs(ctx, described)
	servedIDs := map[string]bool{}
	for _, d := range described {
		servedIDs[d.Group] = d.ErrorCode == 0
	}
	for _, d := range described {
		if d.ErrorCode == kerr.GroupIDNotFound.Code {
			continue
		}
		if d.ErrorCode != 0 {
			return nil, fmt.Errorf("describe group %s: %w", d.Group, kerr.ErrorForCode(d.ErrorCode))
		}
		out = append(out, fromDescribed(d, inputs[d.Group]))
	}
	observed, err := s.observedGroups(ctx, id, servedIDs)
	if err != nil {
		return nil, err
	}
	out = append(out, observed...)
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

func fromDescribed(d kmsg.StreamsGroupDescribeResponseGroup, in lagInputs) Group {
	g := Group{ID: d.Group, Served: true, State: d.State, GroupEpoch: d.Epoch, AssignmentEpoch: d.AssignmentEpoch, Members: []Member{}}
	if d.Topology != nil {
		g.TopologyEpoch = d.Topology.Epoch
	}
	ends := newTaskEnds(d, in.fetched, in.fetchErr)
	for _, m := range d.Members {
		mm := Member{MemberID: m.MemberID, Label: memberLabel(m.ClientHost, m.ProcessID, m.ClientID), Protocol: "streams", MemberEpoch: m.MemberEpoch, ProcessID: m.ProcessID,
			ClientID: m.ClientID, ClientHost: m.ClientHost, InstanceID: m.InstanceID,
			Active: taskNames(m.Assignment.ActiveTasks), Standby: taskNames(m.Assignment.StandbyTasks), Warmup: taskNames(m.Assignment.WarmupTasks)}
		if m.IsClassic {
			mm.Protocol = "classic"
		}
		mm.setLag(m, in.reports[m.MemberID], ends, in)
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

// Phase is a group's migration phase, from the migration's events.
type Phase struct {
	// Kind is takeover or hand-back.
	Kind string `json:"kind"`
	// State is running, done or failed.
	State string    `json:"state"`
	Since time.Time `json:"since"`
	// Took is how long the step took for the app: from its start until
	// every task ran again (Settled); empty until then. A takeover settles
	// when its group is Stable here, every task running where the
	// assignor put it; a hand-back when every member of the broker's
	// classic generation after it has its assignment, and it starts at
	// the last streams member's leave that led to it. Flip is the state
	// flip alone: from the step's start event to its done or failed event.
	Took    string    `json:"took,omitempty"`
	Flip    string    `json:"stateFlip,omitempty"`
	Settled time.Time `json:"settled,omitzero"`
	Reason  string    `json:"reason,omitempty"`
	// began is when the step started; tasksRunning whether the group's tasks ran
	// at its last group-state event; lastStreamsLeave when a streams member
	// of the group last left.
	began            time.Time
	tasksRunning     bool
	lastStreamsLeave time.Time
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
