package coordinator

import (
	"errors"
	"fmt"
	"time"
)

// Load replays records (e.g. read back from a durable log at start) and arms
// the timers of every loaded member, as Kafka does when a coordinator loads.
func (c *Coordinator) Load(records []Record) error {
	start := time.Now()
	loaded := len(records)
	byGroup := map[string][]Record{}
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
		var notRun *coordError // closed (or unloaded) under the load
		c.run(id, func(s *shard) {
			gs, err := Replay(nil, recs)
			if err != nil {
				done <- fmt.Errorf("load %s: %w", id, err)
				return
			}
			// A group loaded over one held already starts afresh: the
			// old group's timers are left to fire as no-ops.
			s.timers = nil
			s.group = gs[id]
			if s.group != nil {
				c.logLoaded(s.group)
				c.onLoaded(s)
			}
			done <- nil
		}, func(e *coordError) { notRun = e; done <- nil })
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
