package streams

import (
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// wins: Empty, NotReady, Assigning, Reconciling, Stable).
type GroupState int8

const (
	GroupEmpty GroupState = iota
	GroupNotReady
	GroupAssigning
	GroupReconciling
	GroupStable
)

// String is the name StreamsGroupDescribe reports.
func (s GroupState) String() string {
	switch s {
	case GroupEmpty:
		return "Empty"
	case GroupNotReady:
		return "NotReady"
	case GroupAssigning:
		return "Assigning"
	case GroupReconciling:
		return "Reconciling"
	}
	return "Stable"
}

// StateFilterName is the lower-case name ListGroups state filters use
// ("not_ready" for NotReady).
func (s GroupState) StateFilterName() string {
	if s == GroupNotReady {
		return "not_ready"
	}
	return strings.ToLower(s.String())
}

// Special member epochs of StreamsGroupHeartbeat.
const (
	LeaveGroupMemberEpoch       int32 = -1
	leaveGroupStaticMemberEpoch int32 = -2
)

// Member is one streams-group member: its metadata and its current assignment
// as the last records set them, plus what is kept in memory only.
type Member struct {
	ID      string
	Meta    *MemberMetadataValue          // nil until its metadata record
	Current *CurrentMemberAssignmentValue // nil: epoch 0, STABLE, no tasks

	// In memory only ([4.4]): the last reported changelog offsets.
	TaskOffsets    []kmsg.TaskOffset
	TaskEndOffsets []kmsg.TaskOffset
	// In memory only (beyond 4.4, for the status page's lag and its age):
	// when the member last reported offsets, and a classic member's task
	// offset sums of its last JoinGroup's SubscriptionInfo.
	Report OffsetReport

	// In memory only (beyond 4.4, heartbeat_session_expiry.go): when the
	// member's session timer fires; zero for a classic member.
	sessionExpires time.Time
}

// OffsetReport is what a member last said of its state's progress, for the
// status page: when, and for a classic member the task offset sums of its
// SubscriptionInfo (a streams member's offsets are its TaskOffsets).
type OffsetReport struct {
	// At is when the member last reported offsets: a streams heartbeat
	// with TaskOffsets or TaskEndOffsets, a classic JoinGroup; zero: never.
	At time.Time
	// ClassicSums are a classic member's task offset sums as its
	// SubscriptionInfo gives them: a changelog offset sum per task with
	// local state, classicstreams.OffsetSumRunningActive for a running
	// active task. Tasks of named topologies are never here (such a join
	// is refused).
	ClassicSums []kmsg.TaskOffset
}

var emptyCurrent = &CurrentMemberAssignmentValue{State: MemberStable}

func (m *Member) CurrentAssignment() *CurrentMemberAssignmentValue {
	if m.Current == nil {
		return emptyCurrent
	}
	return m.Current
}

func (m *Member) MemberEpoch() int32 { return m.CurrentAssignment().MemberEpoch }

func (m *Member) ProcessID() string {
	if m.Meta == nil {
		return ""
	}
	return m.Meta.ProcessID
}

func (m *Member) InstanceID() string {
	if m.Meta == nil {
		return ""
	}
	return m.Meta.InstanceID
}

// Group is one streams group. The exported fields are exactly what replaying
// the group's records gives; the rest is derived from them or kept in memory.
type Group struct {
	ID string

	// From StreamsGroupMetadata.
	GroupEpoch             int32
	MetadataHash           uint64
	ValidatedTopologyEpoch int32
	LastAssignmentConfigs  []KeyValue

	// From StreamsGroupTopology.
	Topology *topology.Topology

	// From RecordOwnership: why the proxy serves the group (nil for a group
	// created without an ownership claim, e.g. by tests).
	Ownership *OwnershipValue

	// From StreamsGroupTargetAssignmentMetadata.
	AssignmentEpoch     int32
	AssignmentTimestamp int64

	// From member metadata and current assignments.
	Members map[string]*Member
	// From StreamsGroupTargetAssignmentMember: member id -> target.
	Target map[string]TaskSets

	// Derived: instance id -> member id; task -> owning processes. The
	// ownership maps count assigned and pending-revocation tasks of every
	// member (Kafka's currentActiveTaskToProcessId and friends).
	StaticMembers map[string]string
	ActiveOwners  map[TaskID]string
	StandbyOwners map[TaskID]map[string]int
	WarmupOwners  map[TaskID]map[string]int
	// warmupTargets counts the target warm-ups of each task (at most
	// streams.num.warmup.replicas in the group): their owners are
	// reconciling (heartbeat_interval.go).
	warmupTargets map[TaskID]int

	Mem GroupMemory
}

// newGroup returns an empty group as Kafka creates it: group epoch and
// assignment epoch 1, so the first bump gives 2.
func newGroup(id string) *Group {
	return &Group{
		ID:                     id,
		GroupEpoch:             1,
		AssignmentEpoch:        1,
		ValidatedTopologyEpoch: -1,
		Members:                map[string]*Member{},
		Target:                 map[string]TaskSets{},
		StaticMembers:          map[string]string{},
		ActiveOwners:           map[TaskID]string{},
		StandbyOwners:          map[TaskID]map[string]int{},
		WarmupOwners:           map[TaskID]map[string]int{},
		warmupTargets:          map[TaskID]int{},
	}
}

// State derives the group state.
func (g *Group) State() GroupState {
	switch {
	case len(g.Members) == 0:
		return GroupEmpty
	case g.Topology == nil || g.Topology.Epoch != g.ValidatedTopologyEpoch:
		return GroupNotReady
	case g.GroupEpoch > g.AssignmentEpoch:
		return GroupAssigning
	}
	for _, m := range g.Members {
		c := m.CurrentAssignment()
		if c.State != MemberStable || c.MemberEpoch != g.AssignmentEpoch {
			return GroupReconciling
		}
	}
	return GroupStable
}

// TasksRunning reports whether every task runs where the assignor put it
// for the current members: the target is computed (no Assigning), no
// member has a task to revoke or one still to get, and every active task
// of the target has an owner. Unlike Stable it ignores a member whose
// epoch lags with its tasks unchanged (a classic member that has not
// rejoined yet runs its tasks all along): it says when a migration step
// is over for the app (issue #39).
func (g *Group) TasksRunning() bool {
	switch g.State() {
	case GroupEmpty, GroupNotReady, GroupAssigning:
		return false
	}
	for _, m := range g.Members {
		if m.CurrentAssignment().State != MemberStable {
			return false
		}
	}
	for _, ts := range g.Target {
		owned := true
		ForEachTask(ts.Active, func(t TaskID) {
			if _, ok := g.ActiveOwners[t]; !ok {
				owned = false
			}
		})
		if !owned {
			return false
		}
	}
	return true
}

func (g *Group) TopologyEpoch() int32 {
	if g.Topology == nil {
		return -1
	}
	return g.Topology.Epoch
}

// activeProcess is the process owning an active task, "" if none.
func (g *Group) activeProcess(t TaskID) (string, bool) {
	p, ok := g.ActiveOwners[t]
	return p, ok
}

func ownersHave(owners map[TaskID]map[string]int, t TaskID, process string) bool {
	return owners[t][process] > 0
}

// addOwnership records (sign=+1) or forgets (sign=-1) what a current
// assignment holds, including pending revocations.
func (g *Group) addOwnership(process string, c *CurrentMemberAssignmentValue, sign int) {
	if c == nil {
		return
	}
	for _, sets := range [2]TaskSets{c.Assigned, c.PendingRevocation} {
		ForEachTask(sets.Active, func(t TaskID) {
			if sign > 0 {
				g.ActiveOwners[t] = process
			} else if g.ActiveOwners[t] == process {
				delete(g.ActiveOwners, t)
			}
		})
		ForEachTask(sets.Standby, func(t TaskID) { countOwner(g.StandbyOwners, t, process, sign) })
		ForEachTask(sets.Warmup, func(t TaskID) { countOwner(g.WarmupOwners, t, process, sign) })
	}
}

func countOwner(owners map[TaskID]map[string]int, t TaskID, process string, sign int) {
	m := owners[t]
	if m == nil {
		if sign < 0 {
			return
		}
		m = map[string]int{}
		owners[t] = m
	}
	m[process] += sign
	if m[process] <= 0 {
		delete(m, process)
		if len(m) == 0 {
			delete(owners, t)
		}
	}
}

// IsClassic reports whether the member speaks the classic protocol.
func (m *Member) IsClassic() bool { return m.Meta != nil && m.Meta.Classic != nil }

// Departed: m left with epoch -1 and is kept for its successor
// (departed.go). Only a dynamic streams member can be: a static member's -2
// is its own (it keeps its instance id), and a classic member never leaves
// this way.
func (m *Member) Departed() bool {
	return m.MemberEpoch() == leaveGroupStaticMemberEpoch && m.InstanceID() == "" && !m.IsClassic()
}

// nilProcessID is what a client without a process id would send: it never
// matches.
const nilProcessID = "00000000-0000-0000-0000-000000000000"

// countWarmupTargets keeps warmupTargets as target records are replayed.
func (g *Group) countWarmupTargets(w Tasks, sign int) {
	if g.warmupTargets == nil {
		g.warmupTargets = map[TaskID]int{}
	}
	ForEachTask(w, func(t TaskID) {
		if g.warmupTargets[t] += sign; g.warmupTargets[t] <= 0 {
			delete(g.warmupTargets, t)
		}
	})
}

// reconciling reports whether the member is part of a rebalance: it has
// tasks to revoke or waits for tasks, a new target is pending or not yet
// reached, it warms up tasks, or it runs an active task another member
// warms up (it revokes the task when that member has caught up).
func (g *Group) reconciling(m *Member, next *CurrentMemberAssignmentValue) bool {
	if next.State != MemberStable || next.MemberEpoch != g.GroupEpoch {
		return true
	}
	if len(next.Assigned.Warmup) > 0 || len(g.Target[m.ID].Warmup) > 0 {
		return true
	}
	for t := range g.warmupTargets {
		if TasksContains(next.Assigned.Active, t.Subtopology, t.Partition) {
			return true
		}
	}
	return false
}
