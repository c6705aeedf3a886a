package coordinator

import (
	"fmt"
	"github.com/streamshift/streamshift/coordinator/streams"
	"time"
)

// The unit of work on a group: a change emits records, replaying each into
// the group, and commits them to the log or rolls the group back to it
// (Kafka's CoordinatorResult and snapshot revert).

// change collects the records of one state change of one group. Records are
// replayed into the group as they are emitted, so later steps see them; if
// the change fails or its append fails, the group is rebuilt from the log.
type change struct {
	c       *Coordinator
	s       *shard
	g       *streams.Group
	cfg     streams.GroupConfig
	now     time.Time
	records []streams.Record
	created bool // the group did not exist before this change
	// classic is the classic metadata of the JoinGroup this change runs
	// as a heartbeat (classic_join.go); nil for streams heartbeats.
	classic *streams.ClassicMemberMetadata
}

func (c *Coordinator) newChange(s *shard) *change {
	return &change{c: c, s: s, g: s.group, cfg: c.groupConfig(s.id), now: c.clock.Now()}
}

func (ch *change) emit(r streams.Record) {
	r.GroupID = ch.g.ID
	ch.records = append(ch.records, r)
	if err := ch.g.Replay(r); err != nil {
		// Only this package builds records; a failure here is a bug.
		panic(fmt.Sprintf("coordinator: replaying own record %v: %v", r, err))
	}
}

// commit appends the change's records to the log. On failure the group goes
// back to what the log holds.
func (ch *change) commit() error {
	if len(ch.records) == 0 {
		return nil
	}
	if err := ch.c.log.Append(ch.s.id, ch.records); err != nil {
		n := len(ch.records) // rollback forgets them
		ch.c.logAppendFailure(ch.s.id, n, err)
		ch.rollback()
		return fmt.Errorf("append %d records of group %s: %w", n, ch.s.id, err)
	}
	ch.records = nil
	return nil
}

// rollback discards the change: the group is rebuilt from its records in the
// log; what lives in memory only is kept.
func (ch *change) rollback() {
	if len(ch.records) == 0 && !ch.created {
		return
	}
	ch.records = nil
	s := ch.s
	var mem streams.GroupMemory
	if s.group != nil {
		mem = s.group.Mem
	}
	recs, err := ch.c.log.Load(s.id)
	var g *streams.Group
	if err == nil {
		var gs streams.Groups
		gs, err = streams.Replay(nil, recs)
		g = gs[s.id]
	}
	if err != nil || g == nil {
		s.stopTimers()
		s.group = nil
		return
	}
	g.Mem = mem
	s.group = g
	ch.g = g
}

// logAppendFailure: a change the group log refused is lost (the group goes
// back to what the log holds) and its client gets an error, so it is an
// error here as in Kafka's runtime.
func (c *Coordinator) logAppendFailure(groupID string, records int, err error) {
	c.logger.Error().Err(err).Str("group", groupID).Int("records", records).
		Msgf("[GroupId %s] Failed to write %d records to the group log: %v.", groupID, records, err)
}
