package coordinator

import (
	"errors"
	"fmt"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// Load replays records (e.g. read back from a durable log at start) and arms
// the timers of every loaded member, as Kafka does when a coordinator loads.
func (c *Coordinator) Load(records []streams.Record) error {
	start := time.Now()
	loaded := len(records)
	byGroup := map[string][]streams.Record{}
	var order []string
	records, err := c.loadGroupConfigs(records)
	if err != nil {
		return err
	}
	for _, r := range records {
		if _, ok := byGroup[r.GroupID]; !ok {
			order = append(order, r.GroupID)
		}
		byGroup[r.GroupID] = append(byGroup[r.GroupID], r)
	}
	var errs []error
	for _, id := range order {
		recs := byGroup[id]
		done := make(chan error, 1)
		var notRun *streams.CoordError // closed (or unloaded) under the load
		c.run(id, func(s *groupQueue) {
			gs, err := streams.Replay(nil, recs)
			if err != nil {
				done <- fmt.Errorf("load %s: %w", id, err)
				return
			}
			// A group loaded over one held already starts afresh: the
			// old group's timers are left to fire as no-ops; its
			// connection watches end (the new group watches none).
			s.timers = nil
			s.stopWatches()
			s.group = gs[id]
			if s.group != nil {
				c.logLoaded(s.group)
				c.onLoaded(s)
			}
			done <- nil
		}, func(e *streams.CoordError) { notRun = e; done <- nil })
		if err := <-done; err != nil {
			errs = append(errs, err)
		}
		if notRun != nil {
			return fmt.Errorf("load %s: %w", id, notRun)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	c.logLoadFinished(loaded, len(order), time.Since(start))
	return nil
}

// loadGroupConfigs applies the group config records among records to the
// coordinator's configuration (a stored config wins over the file's
// per-group settings: it is newer) and returns the other records.
func (c *Coordinator) loadGroupConfigs(records []streams.Record) ([]streams.Record, error) {
	rest := records[:0:0]
	var groups map[string]streams.GroupConfigOverride
	for _, r := range records {
		if r.Type != streams.RecordGroupConfig {
			rest = append(rest, r)
			continue
		}
		if groups == nil {
			c.mu.Lock()
			groups = make(map[string]streams.GroupConfigOverride, len(c.cfg.Groups))
			for k, v := range c.cfg.Groups {
				groups[k] = v
			}
			c.mu.Unlock()
		}
		if r.Tombstone() {
			delete(groups, r.GroupID)
			continue
		}
		v, ok := r.Value.(*streams.GroupConfigValue)
		if !ok {
			return nil, fmt.Errorf("load %s of group %s: value %T", r.Type, r.GroupID, r.Value)
		}
		o, unknown, err := v.Override()
		if err != nil {
			return nil, fmt.Errorf("load %s of group %s: %w", r.Type, r.GroupID, err)
		}
		if len(unknown) > 0 {
			c.logger.Warn().Str("group", r.GroupID).Strs("configs", unknown).
				Msg("group configs unknown to this release (written by a newer streamshift?) are ignored")
		}
		groups[r.GroupID] = o
	}
	if groups != nil {
		c.mu.Lock()
		c.cfg.Groups = groups
		c.mu.Unlock()
	}
	return rest, nil
}

// onLoaded arms the timers of a group just replayed from the log: a session
// timer for every member and a rebalance timer for every member revoking.
func (c *Coordinator) onLoaded(s *groupQueue) {
	ch := c.newChange(s)
	ch.OnLoaded()
	c.finish(s, ch) // it writes nothing
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
