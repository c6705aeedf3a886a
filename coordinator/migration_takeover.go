package coordinator

import "github.com/streamshift/streamshift/coordinator/streams"

// The takeover in progress of a group (package migration's MaybeTakeOver)
// is the group's migration state (migration_state.go), on its queue: the
// streams joins of the group meanwhile wait for its end, then take the
// normal path, which finds the group served here (or still upstream).

// BeginTakeover makes the caller's takeover of the group the running one,
// unless one runs already. finish, if not nil, is the caller's: it runs the
// takeover and calls finish once, when it ended (its joins then go on).
// Otherwise BeginTakeover waited for the running one to end, or for cancel
// to be closed (gone: the client is gone, nobody to answer).
func (c *Coordinator) BeginTakeover(groupID string, cancel <-chan struct{}) (finish func(), gone bool) {
	type begun struct {
		running chan struct{} // the takeover to wait for
		mine    chan struct{} // the caller's
	}
	ch := make(chan begun, 1)
	c.run(groupID, func(s *groupQueue) {
		st := s.migState()
		if st.takingOver != nil {
			ch <- begun{running: st.takingOver}
			return
		}
		mine := make(chan struct{})
		st.takingOver = mine
		ch <- begun{mine: mine}
	}, func(*streams.CoordError) { ch <- begun{} })
	var b begun
	select {
	case b = <-ch:
	case <-cancel:
		// The caller's takeover, if the queue makes it one, ends at once.
		go func() {
			if b := <-ch; b.mine != nil {
				c.endTakeover(groupID, b.mine)
			}
		}()
		return nil, true
	}
	switch {
	case b.mine != nil:
		return func() { c.endTakeover(groupID, b.mine) }, false
	case b.running == nil:
		// The coordinator closed or the group is unloading: no takeover
		// here to wait for.
		return nil, false
	}
	select {
	case <-b.running:
		return nil, false
	case <-cancel:
		return nil, true
	}
}

// endTakeover ends the group's takeover mine, if it is still the group's
// (a group gone away ended it then), and lets its waiting joins go on.
func (c *Coordinator) endTakeover(groupID string, mine chan struct{}) {
	c.run(groupID, func(s *groupQueue) {
		st := s.mig()
		if st == nil || st.takingOver != mine {
			return
		}
		st.takingOver = nil
		close(mine)
		s.endMigrationIfIdle()
	}, nil)
}
