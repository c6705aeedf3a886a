// Package assignor holds the streams-group task assignors: pure functions from
// a group specification and a topology to a group assignment, mirroring the
// TaskAssignor interface of Kafka's group-coordinator-api module.
//
// It owns the assignment's arithmetic only: it imports nothing of the
// project and no I/O, and never reads or changes a group (its caller,
// package streams, turns the assignment into records).
package assignor

// Tasks maps a subtopology id to the partition numbers (task ids) of that
// subtopology. A nil or empty map means no tasks.
type Tasks map[string][]int32

// MemberSpec is what the assignor knows of one member (Kafka's
// AssignmentMemberSpec). The Active/Standby/Warmup tasks are the member's
// previous assignment: Kafka 4.4 passes the current assignment.
type MemberSpec struct {
	InstanceID string // empty if not a static member
	RackID     string // empty if none
	ProcessID  string
	ClientTags map[string]string

	ActiveTasks  Tasks
	StandbyTasks Tasks
	WarmupTasks  Tasks

	// TaskOffsets are the member's reported changelog offset sums per task
	// (4.4): subtopology -> partition -> offset sum. Optional.
	TaskOffsets map[string]map[int32]int64
}

// GroupSpec is the assignor's input for one group.
type GroupSpec struct {
	// Members by member id.
	Members map[string]MemberSpec
	// Configs are the assignment configs, e.g. "num.standby.replicas".
	Configs map[string]string
}

// Subtopology describes one subtopology to the assignor.
type Subtopology struct {
	ID string
	// NumTasks is the max number of input partitions of the subtopology.
	NumTasks int32
	// Stateful subtopologies (those with changelogs) get standby tasks.
	Stateful bool
}

// TopologyDescriber describes the configured topology (Kafka's
// TopologyDescriber): subtopologies sorted by id.
type TopologyDescriber interface {
	Subtopologies() []Subtopology
}

// MemberAssignment is the assignor's output for one member.
type MemberAssignment struct {
	ActiveTasks  Tasks
	StandbyTasks Tasks
	WarmupTasks  Tasks
}

// GroupAssignment is the assignor's output: member id -> assignment. Every
// member of the GroupSpec has an entry, possibly empty.
type GroupAssignment struct {
	Members map[string]MemberAssignment
}

// TaskAssignor computes a target assignment. Implementations are pure and
// deterministic: the same input gives the same output.
type TaskAssignor interface {
	Name() string
	Assign(spec GroupSpec, topology TopologyDescriber) (GroupAssignment, error)
}
