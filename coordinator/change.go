package coordinator

import (
	"fmt"
	"maps"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// The unit of work on a group: an operation runs as a change (streams/change.go)
// that emits records, replaying each into the group; the runtime carries out
// the I/O the change asks for, then commits its records to the log or rolls
// the group back to it (Kafka's CoordinatorResult and snapshot revert).

// newChange starts a change of the group on its executor, with the inputs an
// operation reads.
func (c *Coordinator) newChange(s *groupQueue) *streams.Change {
	c.mu.Lock()
	cfg, maxSize, claim := c.cfg.Group(s.id), c.cfg.MaxGroupSize, c.claims[s.id]
	c.mu.Unlock()
	return &streams.Change{
		GroupID:      s.id,
		Group:        s.group,
		Config:       cfg,
		Now:          c.clock.Now(),
		Image:        c.metadata.Image(),
		Assignor:     c.assignor,
		Configure:    c.configure,
		MaxGroupSize: maxSize,
		// Only an operation whose caller creates the topics it returns
		// may ask for them (withTopics).
		CanCreateTopics: false,
		Claim:           claim,
		Pending:         s,
		Wall:            time.Now,
		DebugWanted:     c.logger.GetLevel() <= zerolog.DebugLevel,

		DisconnectExpiryHeartbeats: c.disconnectK,
	}
}

// withTopics lets the change's operation ask for internal topics if the
// coordinator's callers create them (Options.CreateTopics), which they
// report back with TopicsCreated (internal_topics.go).
func (c *Coordinator) withTopics(ch *streams.Change) *streams.Change {
	ch.CanCreateTopics = c.createTopics
	return ch
}

// creatableTopics are the topics the change's operation asked for, in one
// list (read before the change finishes).
func creatableTopics(ch *streams.Change) []streams.CreatableTopic {
	if len(ch.Topics) == 1 {
		return ch.Topics[0]
	}
	var out []streams.CreatableTopic
	for _, todo := range ch.Topics {
		out = append(out, todo...)
	}
	return out
}

// carryOut does what the change asked for, in order: its log lines, the
// claim it took, its timers and its metadata refreshes. The internal topics
// it asks for are not created here: the operation returns them to its
// caller (creatableTopics), as Kafka's StreamsGroupHeartbeatResult does.
// The group the change holds becomes the shard's. It runs once an operation
// returns, before its records are committed or rolled back, and again for
// what a later step of the same change asks.
func (c *Coordinator) carryOut(s *groupQueue, ch *streams.Change) {
	s.group = ch.Group
	for _, e := range ch.Logs {
		c.writeLog(e)
		logEvent(c.events, ch.Now, e)
	}
	ch.Logs = nil
	if ch.ClaimTaken != nil {
		c.dropClaim(s.id, ch.ClaimTaken)
		ch.ClaimTaken = nil
	}
	for _, op := range ch.Timers {
		if op.Fire == nil {
			s.cancelTimer(op.Key)
		} else {
			c.armTimer(s, ch.Now, op)
		}
	}
	ch.Timers = nil
	for _, topics := range ch.Refresh {
		c.metadata.RequestRefresh(topics)
	}
	ch.Refresh = nil
	for _, closed := range ch.Watch {
		c.watchConn(s, closed)
	}
	ch.Watch = nil
	for _, closed := range s.group.UnwatchUnused() {
		s.stopWatch(closed)
	}
	s.takeReleased(ch)
}

// releaseEnded asks the change which of the group's held requests it
// ended the wait of (streams.Change.ReleaseEnded), once it is in the
// group, and takes them with those it released itself.
func (s *groupQueue) releaseEnded(ch *streams.Change) {
	if len(s.held) > 0 {
		ch.ReleaseEnded(maps.Keys(s.held))
	}
	s.takeReleased(ch)
}

// takeReleased moves the held requests the change released to the ones
// the executor runs again after the work (runReleased).
func (s *groupQueue) takeReleased(ch *streams.Change) {
	for _, key := range ch.Released {
		if a := s.held[key]; a != nil {
			delete(s.held, key)
			s.released = append(s.released, a)
		}
	}
	ch.Released = nil
}

// dropClaim drops the group's pending claim once the join creating the
// group took it (takeClaim), unless a newer claim replaced it. If that
// change is rolled back, the claim is gone with it and the member's next
// join asks the upstream again (which then shows the proxy's anchor).
func (c *Coordinator) dropClaim(group string, taken *streams.OwnershipValue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.claims[group] == taken {
		delete(c.claims, group)
	}
}

// writeLog writes a change's log entry to the coordinator's logger.
func (c *Coordinator) writeLog(e *streams.LogEntry) {
	var ev *zerolog.Event
	switch e.Level {
	case streams.LevelDebug:
		ev = c.logger.Debug()
	case streams.LevelInfo:
		ev = c.logger.Info()
	case streams.LevelWarn:
		ev = c.logger.Warn()
	default:
		ev = c.logger.Error()
	}
	if ev == nil {
		return
	}
	for _, f := range e.Fields {
		switch v := f.Value.(type) {
		case string:
			ev = ev.Str(f.Key, v)
		case []string:
			ev = ev.Strs(f.Key, v)
		case int:
			ev = ev.Int(f.Key, v)
		case int32:
			ev = ev.Int32(f.Key, v)
		case int64:
			ev = ev.Int64(f.Key, v)
		case uint64:
			ev = ev.Uint64(f.Key, v)
		case time.Duration:
			ev = ev.Dur(f.Key, v)
		case error:
			if f.Key == "error" {
				ev = ev.Err(v) // zerolog's error field, as Err names it
			} else {
				ev = ev.AnErr(f.Key, v)
			}
		default:
			ev = ev.Interface(f.Key, v)
		}
	}
	ev.Msgf(e.Format, e.Args...)
}

// finish ends an operation's change as the operation asked (its Outcome):
// its I/O carried out, its records appended or rolled back. It reports a
// failed append, which the caller answers.
func (c *Coordinator) finish(s *groupQueue, ch *streams.Change) error {
	switch ch.Outcome {
	case streams.OutcomeCommit:
		return c.commit(s, ch)
	case streams.OutcomeRollBack:
		c.rollback(s, ch)
	default:
		c.carryOut(s, ch)
		s.releaseEnded(ch)
	}
	return nil
}

// commit carries out the change's I/O and appends its records to the log.
// On failure the group goes back to what the log holds.
func (c *Coordinator) commit(s *groupQueue, ch *streams.Change) error {
	c.carryOut(s, ch)
	if len(ch.Records) == 0 {
		s.releaseEnded(ch)
		return nil
	}
	start := time.Now()
	err := c.log.Append(s.id, ch.Records)
	if c.timings != nil {
		c.timings.LogAppended(time.Since(start), err)
	}
	if err != nil {
		n := len(ch.Records) // rollback forgets them
		c.logAppendFailure(s.id, n, err)
		c.rollback(s, ch)
		return fmt.Errorf("append %d records of group %s: %w", n, s.id, err)
	}
	recordsEvent(c.events, ch.Now, s.id, ch.Records)
	s.stateSeen.tell(c.events, ch.Now, s.id, s.group)
	ch.Records = nil
	s.releaseEnded(ch)
	if ch.Deleted {
		c.expired(s)
	}
	return nil
}

// rollback carries out the change's I/O and discards its records: the
// group is rebuilt from its records in the log; what lives in memory only
// is kept.
func (c *Coordinator) rollback(s *groupQueue, ch *streams.Change) {
	c.carryOut(s, ch)
	if len(ch.Records) == 0 && !ch.Created {
		return
	}
	ch.Records = nil
	var mem streams.GroupMemory
	if s.group != nil {
		mem = s.group.Mem
	}
	recs, err := c.log.Load(s.id)
	var g *streams.Group
	if err == nil {
		var gs streams.Groups
		gs, err = streams.Replay(nil, recs)
		g = gs[s.id]
	}
	if err != nil || g == nil {
		s.stopTimers()
		s.group = nil
		ch.Group = nil
		return
	}
	g.Mem = mem
	s.group = g
	ch.Group = g
}

// logAppendFailure: a change the group log refused is lost (the group goes
// back to what the log holds) and its client gets an error, so it is an
// error here as in Kafka's runtime.
func (c *Coordinator) logAppendFailure(groupID string, records int, err error) {
	c.logger.Error().Err(err).Str("group", groupID).Int("records", records).
		Msgf("[GroupId %s] Failed to write %d records to the group log: %v.", groupID, records, err)
}
