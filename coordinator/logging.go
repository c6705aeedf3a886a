package coordinator

import (
	"strings"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
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
	bumpMemberJoined         = "member joined"
	bumpMemberLeft           = "member left"
	bumpMemberFenced         = "member fenced"
	bumpMemberMetadata       = "member metadata changed"
	bumpStaticMemberMetadata = "static member metadata changed"
	bumpTopology             = "topology initialized"
	bumpMetadata             = "topic metadata changed"
	bumpTopologyValidated    = "topology validated"
	bumpAssignmentConfigs    = "assignment configs changed"
)

// logAt starts an entry of the group at level; nil for a debug line when
// debug lines are not wanted.
func (ch *change) logAt(level logLevel) *logEntry {
	if level == levelDebug && !ch.debugWanted {
		return nil
	}
	e := &logEntry{level: level}
	ch.logs = append(ch.logs, e)
	return e.Str("group", ch.groupID)
}

func (ch *change) logInfo(memberID string) *logEntry {
	return ch.logAt(levelInfo).Str("member", memberID)
}

func (ch *change) logDebug(memberID string) *logEntry {
	return ch.logAt(levelDebug).Str("member", memberID)
}

// logEpochBump is Kafka's "Bumped streams group epoch" line, with the
// previous epoch and why.
func (ch *change) logEpochBump(memberID string, previous int32, v *streams.GroupMetadataValue, why []string) {
	reason := strings.Join(why, ", ")
	ch.logInfo(memberID).Int32("previous_epoch", previous).Int32("epoch", v.Epoch).Str("reason", reason).
		Msgf("[GroupId %s][MemberId %s] Bumped streams group epoch from %d to %d with metadata hash %d and validated topology epoch %d because: %s.",
			ch.groupID, memberID, previous, v.Epoch, v.MetadataHash, v.ValidatedTopologyEpoch, reason)
}

// logFenced is Kafka's fencing line; reason completes "because ...".
func (ch *change) logFenced(m *streams.Member, reason string) {
	ch.logInfo(m.ID).Str("reason", reason).
		Msgf("[GroupId %s] Member %s fenced from the group because %s.", ch.groupID, m.ID, reason)
}

// logLeft is Kafka's line for a member that left on its own (how: "left the
// streams group", "temporarily left the streams group", "has left group
// through explicit `LeaveGroup` request").
func (ch *change) logLeft(m *streams.Member, how string) {
	if id := m.InstanceID(); id != "" {
		ch.logInfo(m.ID).Str("instance", id).
			Msgf("[GroupId %s][MemberId %s] Static member %s with instance id %s %s.", ch.groupID, m.ID, m.ID, id, how)
		return
	}
	ch.logInfo(m.ID).Msgf("[GroupId %s][MemberId %s] Member %s %s.", ch.groupID, m.ID, m.ID, how)
}

// logLoaded is Kafka's per-group load line, with its members at debug.
func (c *Coordinator) logLoaded(g *streams.Group) {
	c.logger.Info().Str("group", g.ID).Int("members", len(g.Members)).Int32("epoch", g.GroupEpoch).
		Msgf("Loaded streams group %s with %d members.", g.ID, len(g.Members))
	for id := range g.Members {
		c.logger.Debug().Str("group", g.ID).Str("member", id).Msgf("Loaded member %s in streams group %s.", id, g.ID)
	}
}

// logLoadFinished is Kafka's "Finished loading of metadata" line.
func (c *Coordinator) logLoadFinished(records, groups int, took time.Duration) {
	c.logger.Info().Int("records", records).Int("groups", groups).Dur("took", took).
		Msgf("Finished loading of the group log in %dms. Loaded %d records of %d groups.", took.Milliseconds(), records, groups)
}
