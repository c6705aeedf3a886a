package streams

import (
	"strings"
)

// The coordinator logs what Kafka's GroupMetadataManager and
// CoordinatorRuntime log, in their words and at their levels, so that an
// operator who reads a broker's group coordinator log reads this one too:
// fencings, departures, group epoch bumps, target assignments, loads and
// unloads at info; failed writes to the group log at error; per-heartbeat
// detail at debug only. Group and member ids are fields as well as text,
// for filtering.

// Reasons of a group epoch bump (the "reason" field of its log line).
const (
	BumpMemberJoined         = "member joined"
	BumpMemberLeft           = "member left"
	BumpMemberFenced         = "member fenced"
	bumpMemberMetadata       = "member metadata changed"
	bumpStaticMemberMetadata = "static member metadata changed"
	BumpTopology             = "topology initialized"
	bumpMetadata             = "topic metadata changed"
	bumpTopologyValidated    = "topology validated"
	bumpAssignmentConfigs    = "assignment configs changed"
	bumpWarmupCaughtUp       = "warm-up task caught up"
	bumpHandBackBarrier      = "hand-back barrier up"
	bumpHandBackAborted      = "hand-back barrier down"
)

// Events a log entry reports (LogEntry.Event), in the vocabulary of
// Kafka's coordinator log lines.
const (
	EventGroupEpochBumped = "group-epoch-bumped"
	EventTargetAssignment = "target-assignment-computed"
	EventMemberFenced     = "member-fenced"
	// EventMemberReplaced: a join replaced members of the other protocol
	// by process id or instance id (replace.go), beyond Kafka.
	EventMemberReplaced = "member-replaced"
	EventMemberLeft     = "member-left"
	// EventClassicDoubleActive: a takeover found a classic assignment
	// giving one active task to several members (classic_double_active.go);
	// fields "task", "dropped_from", "generation".
	EventClassicDoubleActive = "classic-double-active"
	// EventGroupState: the group's state (Empty, NotReady, Assigning,
	// Reconciling, Stable) or whether its tasks run changed with a
	// committed change (the coordinator's runtime tells it, not a log
	// line); fields "state", "previous" and FieldTasksRunning
	// (Group.TasksRunning). A migration step is over for the app when its
	// tasks run again, not at its state flip (issue #39).
	EventGroupState   = "group-state"
	FieldTasksRunning = "tasksRunning"
	// EventClassicGroupSynced: every member of the broker's classic
	// generation after a hand-back has its assignment (a SyncGroup
	// answered without error for that generation passed through the
	// proxy): the hand-back settled, the app's tasks run again (issue
	// #39; the coordinator's runtime tells it, not a log line). Fields
	// "generation" and "members".
	EventClassicGroupSynced = "classic-group-synced"
)

// logAt starts an entry of the group at level; nil for a debug line when
// debug lines are not wanted.
func (ch *Change) logAt(level LogLevel) *LogEntry {
	if level == LevelDebug && !ch.DebugWanted {
		return nil
	}
	e := &LogEntry{Level: level}
	ch.Logs = append(ch.Logs, e)
	return e.Str("group", ch.GroupID)
}

func (ch *Change) logInfo(memberID string) *LogEntry {
	return ch.logAt(LevelInfo).Str("member", memberID)
}

func (ch *Change) logDebug(memberID string) *LogEntry {
	return ch.logAt(LevelDebug).Str("member", memberID)
}

// logEpochBump is Kafka's "Bumped streams group epoch" line, with the
// previous epoch and why.
func (ch *Change) logEpochBump(memberID string, previous int32, v *GroupMetadataValue, why []string) {
	reason := strings.Join(why, ", ")
	ch.logInfo(memberID).Ev(EventGroupEpochBumped).Int32("previous_epoch", previous).Int32("epoch", v.Epoch).Str("reason", reason).
		Msgf("[GroupId %s][MemberId %s] Bumped streams group epoch from %d to %d with metadata hash %d and validated topology epoch %d because: %s.",
			ch.GroupID, memberID, previous, v.Epoch, v.MetadataHash, v.ValidatedTopologyEpoch, reason)
}

// logFenced is Kafka's fencing line; reason completes "because ...". The
// connection field (ConnOpen, ConnClosed, ConnUnknown: the member's latest
// request's connection at the fencing) tells a reader, and the capture's
// flight recorder, a stopped instance's designed end from a live member
// that stopped heartbeating.
func (ch *Change) logFenced(m *Member, reason string) {
	ch.logInfo(m.ID).Ev(EventMemberFenced).Str("reason", reason).Str(FieldConnection, ch.Group.connState(m.ID)).
		Msgf("[GroupId %s] Member %s fenced from the group because %s.", ch.GroupID, m.ID, reason)
}

// logLeft is Kafka's line for a member that left on its own (how: "left the
// streams group", "temporarily left the streams group", "has left group
// through explicit `LeaveGroup` request").
func (ch *Change) logLeft(m *Member, how string) {
	protocol := ProtocolStreams
	if m.IsClassic() {
		protocol = ProtocolClassic
	}
	e := ch.logInfo(m.ID).Ev(EventMemberLeft).Str(FieldProtocol, protocol)
	if id := m.InstanceID(); id != "" {
		e.Str("instance", id).
			Msgf("[GroupId %s][MemberId %s] Static member %s with instance id %s %s.", ch.GroupID, m.ID, m.ID, id, how)
		return
	}
	e.Msgf("[GroupId %s][MemberId %s] Member %s %s.", ch.GroupID, m.ID, m.ID, how)
}

// FieldProtocol is the member-left event's field naming the protocol of
// the member that left (ProtocolStreams, ProtocolClassic): a hand-back
// starts from the last streams member's leave (issue #39).
const (
	FieldProtocol   = "protocol"
	ProtocolStreams = "streams"
	ProtocolClassic = "classic"
)
