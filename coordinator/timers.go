package coordinator

import (
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// groupTimer is a pending timer of a group. Its callback acts only if the
// timer is still the group's timer of that key and its deadline has passed:
// a timer that was re-armed or cancelled after it fired is a no-op.
type groupTimer struct {
	t        Timer
	deadline time.Time
	fire     func(ch *streams.Change)
}

// stopTimers stops the group's timers and its connection watches: the
// group is gone (deleted, unloaded, back to a log without it) or the
// coordinator closed.
func (s *groupQueue) stopTimers() {
	for k, t := range s.timers {
		t.t.Stop()
		delete(s.timers, k)
	}
	s.stopWatches()
}

// armTimer arms (or re-arms) a timer of the group as a change asked
// (timerOp); its fire runs as a change of its own on the group's queue.
// Re-arming a pending timer resets it in place.
func (c *Coordinator) armTimer(s *groupQueue, now time.Time, op streams.TimerOp) {
	key, d, fire := op.Key, op.After, op.Fire
	if s.timers == nil {
		s.timers = map[streams.TimerKey]*groupTimer{}
	}
	deadline := now.Add(d)
	if gt := s.timers[key]; gt != nil {
		gt.deadline = deadline
		gt.fire = fire
		gt.t.Reset(d)
		return
	}
	groupID := s.id
	gt := &groupTimer{deadline: deadline, fire: fire}
	gt.t = c.clock.AfterFunc(d, func() {
		c.run(groupID, func(s *groupQueue) {
			if s.group == nil || s.timers[key] != gt {
				return
			}
			fch := c.newChange(s)
			if fch.Now.Before(gt.deadline) {
				return // re-armed after it fired
			}
			delete(s.timers, key)
			gt.fire(fch)
			// On failure the group is back to its log and the timer's
			// work is lost, as in a failover; Kafka's timer logs and
			// ignores a failed write the same way.
			if err := c.commit(s, fch); err != nil {
				name := key.Name(groupID)
				c.logger.Error().Err(err).Str("group", groupID).Str("member", key.Member).Str("timer", name).
					Msgf("[GroupId %s] The write event for the timer %s failed due to %v. Ignoring it.", groupID, name, err)
			}
		}, nil) // a closed or unloaded group's timer has nobody to answer
	})
	s.timers[key] = gt
}

func (s *groupQueue) cancelTimer(key streams.TimerKey) {
	if t := s.timers[key]; t != nil {
		t.t.Stop()
		delete(s.timers, key)
	}
}

// HasTimer makes a group's queue the streams.ArmedTimers of its group.
func (s *groupQueue) HasTimer(key streams.TimerKey) bool {
	_, ok := s.timers[key]
	return ok
}

// The group expiration timer (streams/group_expiration.go) is armed and
// fired by the runtime: after every work of a group, and on the commit of
// its tombstones.

// watchExpiration arms the group's expiration timer when a work leaves it
// Expirable (Empty, no hand-back) and cancels it when a work leaves it
// otherwise; a group that stays Empty keeps the timer it armed when it
// became Empty, so it expires GroupExpiration after that. It runs after
// every work of the group, under its lock.
func (c *Coordinator) watchExpiration(s *groupQueue) {
	if c.expireAfter <= 0 {
		return
	}
	key := streams.GroupExpirationTimerKey
	switch {
	case !streams.Expirable(s.group):
		s.cancelTimer(key)
	case !s.HasTimer(key):
		emptySince := c.clock.Now()
		c.armTimer(s, emptySince, streams.TimerOp{Key: key, After: c.expireAfter, Fire: func(ch *streams.Change) {
			ch.ExpireGroup(ch.Now.Sub(emptySince))
		}})
	}
}

// expired drops the state of a group whose tombstones are in the log, and
// tells OnGroupExpired.
func (c *Coordinator) expired(s *groupQueue) {
	s.stopTimers()
	s.group = nil
	if c.onExpired != nil {
		c.onExpired(s.id)
	}
}

// Besides timers, the runtime reports one more outside event to a group:
// the close of a client connection its change asked it to watch.

// watchConn reports the close of a client connection to a group, as an
// operation of its own on the group's executor (streams.Change.ConnClosed,
// the disconnect expiry). The connection's close channel is the proxy's
// close hook. The goroutine ends with the connection, the coordinator, or
// the group's watch of it: a group stops watching a connection no member
// references any more (streams/conn_watch.go: a client of another
// instance's signal may never close) and when its state goes. A group
// watches each connection once (streams.Change.watch).
func (c *Coordinator) watchConn(s *groupQueue, closed <-chan struct{}) {
	if s.watches == nil {
		s.watches = map[<-chan struct{}]chan struct{}{}
	}
	s.stopWatch(closed) // none: the group asks once per watch
	stop := make(chan struct{})
	s.watches[closed] = stop
	groupID := s.id
	go func() {
		select {
		case <-closed:
		case <-stop:
			return
		case <-c.stop:
			return
		}
		c.run(groupID, func(s *groupQueue) {
			// A watch that ended while this report was queued (or
			// a queue that replaced the one that watched) is not
			// reported: the group no longer waits for it.
			if s.group == nil || s.watches[closed] != stop {
				return
			}
			delete(s.watches, closed)
			ch := c.newChange(s)
			ch.ConnClosed(closed)
			_ = c.finish(s, ch) // timers, and the records of a replacement (replaceOnClose)
		}, nil)
	}()
}

// stopWatch ends the group's watch of a connection, if any.
func (s *groupQueue) stopWatch(closed <-chan struct{}) {
	if stop := s.watches[closed]; stop != nil {
		close(stop)
		delete(s.watches, closed)
	}
}

// stopWatches ends every connection watch of the group.
func (s *groupQueue) stopWatches() {
	for closed := range s.watches {
		s.stopWatch(closed)
	}
}
