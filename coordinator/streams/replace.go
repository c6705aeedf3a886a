package streams

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// Replacement by identity (issue #28, docs/fast-roll.md §2), beyond Kafka.
// A rolling migration step stops instance A and starts A' on A's state
// directory. A classic Kafka Streams member never leaves on close
// (internal.leave.group.on.close=false), so without this rule A's members
// keep their tasks until their sessions expire (45 s by default). A' carries
// A's process id (KAFKA-10716 keeps it in the state directory), so a join of
// A' whose process id matches members of the other protocol still in the
// group replaces them at once: they are removed in the join's change and
// their tasks become the joining member's, as Kafka replaces a static member
// that rejoins (replaceStaticMember).
//
// The guard is the connection (member_conn.go): each old member's latest
// request came on a connection that is now closed. A' cannot open A's state
// directory before A's close() released its lock, and A's consumers close
// their sockets before that, so a real roll always meets it; two live
// processes sharing a process id (a copied state directory) never do, and
// keep today's behaviour. Same-protocol restarts keep Kafka's behaviour.

// replacedByProcess is the members a join with process id pid replaces: every
// member of the other protocol (the join is classic when ch.Classic is set)
// with that process id, if each one's connection is closed, and its
// departed members of either protocol (departed.go); none if any is still
// connected, or if there are none.
func (ch *Change) replacedByProcess(joining string, pid *string) []*Member {
	if pid == nil || *pid == "" || *pid == nilProcessID {
		return nil
	}
	g := ch.Group
	joinClassic := ch.Classic != nil
	var olds []*Member
	live, known := false, true
	for _, m := range g.Members {
		if m.ID == joining || m.ProcessID() != *pid {
			continue
		}
		if m.Departed() {
			// It left; its tasks wait for this join (departed.go).
			olds = append(olds, m)
			continue
		}
		if m.IsClassic() == joinClassic {
			continue
		}
		if !g.connGone(m.ID) {
			live = true
			known = known && g.connKnown(m.ID)
		}
		olds = append(olds, m)
	}
	if len(olds) == 0 {
		return nil
	}
	if live {
		if known {
			// Connected, not merely unknown (a member carried over by
			// a takeover, or from before a failover).
			ch.warnTwin(joining, *pid, olds)
		}
		return nil
	}
	sort.Slice(olds, func(i, j int) bool { return olds[i].ID < olds[j].ID })
	return olds
}

// warnTwin says once per group and process id that a join shares its process
// id with a member still connected: a copied state directory, most likely.
func (ch *Change) warnTwin(joining, pid string, olds []*Member) {
	g := ch.Group
	if g.Mem.warnedTwins[pid] {
		return
	}
	if g.Mem.warnedTwins == nil {
		g.Mem.warnedTwins = map[string]bool{}
	}
	g.Mem.warnedTwins[pid] = true
	ids := make([]string, len(olds))
	for i, m := range olds {
		ids[i] = fmt.Sprintf("%s on connection %d", m.ID, g.connIDOf(m.ID))
	}
	sort.Strings(ids)
	ch.logAt(LevelWarn).Str("member", joining).Str("process", pid).Strs("members", ids).
		Msgf("[GroupId %s][MemberId %s] Process id %s is used by members still connected (%s): not replaced. A copied state directory? Give each instance its own state directory.",
			g.ID, joining, pid, strings.Join(ids, ", "))
}

// replacesStaticByInstance: may a join replace the static member old, which
// holds the join's group.instance.id and has not released it (epoch -2)? A
// streams join over a classic owner always may (Kafka's classic rule
// replaces a static member at once); a classic join over a streams owner
// only once the owner's connection is closed.
func (ch *Change) replacesStaticByInstance(old *Member) bool {
	switch {
	case ch.Classic == nil && old.IsClassic():
		return true
	case ch.Classic != nil && !old.IsClassic():
		return ch.Group.connGone(old.ID)
	}
	return false
}

// releaseForReplacement releases the static member old so that the join's
// existing static path (replaceStaticMember) replaces it, and says why.
func (ch *Change) releaseForReplacement(old *Member, joining string) {
	ch.logReplaced([]*Member{old}, joining, "instance", old.InstanceID(), old.CurrentAssignment().Assigned)
	ch.releaseStatic(old)
	ch.cancel(sessionTimerKey(old.ID))
}

// replaceMembers removes olds (the members of one process a join replaces by
// process id) and writes the joining member memberID with meta, their tasks
// as its current assignment at epoch 0 and their targets as its target: in
// this one change the tasks' active owner moves from the old members to the
// new one, so no moment has two owners or an unowned task another process
// could be given. The heartbeat goes on as for a new member (a group epoch
// bump, a new target). The old members' process closed every task cleanly
// before A' could join (it released the state directory).
func (ch *Change) replaceMembers(olds []*Member, memberID string, meta *MemberMetadataValue) *Member {
	g := ch.Group
	cur := CurrentMemberAssignmentValue{State: MemberStable}
	var target TaskSets
	epochs := map[TaskID]int32{}
	for _, o := range olds {
		oc := o.CurrentAssignment()
		cur.Assigned = unionSets(cur.Assigned, oc.Assigned)
		target = unionSets(target, g.Target[o.ID])
		maps.Copy(epochs, restrictEpochs(oc.ActiveEpochs, oc.Assigned.Active, false, 0))
	}
	if len(epochs) > 0 {
		cur.ActiveEpochs = epochs
	}
	ch.logReplaced(olds, memberID, "process", meta.ProcessID, cur.Assigned)
	for _, o := range olds {
		ch.tombstoneMember(o.ID)
		ch.cancel(sessionTimerKey(o.ID))
		ch.cancel(RebalanceTimerKey(o.ID))
		ch.cancel(classicSyncTimerKey(o.ID))
		ch.cancel(classicJoinTimerKey(o.ID))
		ch.cancel(disconnectExpiryTimerKey(o.ID))
	}
	ch.emit(newMemberRecord(g.ID, memberID, meta))
	ch.emit(newTargetAssignmentRecord(g.ID, memberID, target))
	ch.emit(newCurrentAssignmentRecord(g.ID, memberID, &cur))
	return g.Members[memberID]
}

// logReplaced is modelled on Kafka's static replacement line, with why (the
// identity that matched: process or instance) and the tasks moved.
func (ch *Change) logReplaced(olds []*Member, memberID, key, value string, moved TaskSets) {
	protocol := "streams"
	if ch.Classic != nil {
		protocol = "classic"
	}
	ids := make([]string, len(olds))
	for i, o := range olds {
		ids[i] = o.ID
	}
	why := "are gone from the wire (connections closed)"
	if key == "instance" {
		why = "of the other protocol hold its instance id"
	}
	ch.logInfo(memberID).Ev(EventMemberReplaced).Strs("replaced_members", ids).Str("key", key).Str(key, value).
		Int("active_tasks", TasksCount(moved.Active)).Int("standby_tasks", TasksCount(moved.Standby)).
		Str("reason", "replaced by identity ("+key+")").
		Msgf("[GroupId %s][MemberId %s] Member with %s id %s joins the streams group using the %s protocol; its earlier members %s %s. Created a new member %s to replace them (replaced by identity (%s)); %d active and %d standby tasks moved.",
			ch.GroupID, memberID, key, value, protocol, strings.Join(ids, ", "), why, memberID, key, TasksCount(moved.Active), TasksCount(moved.Standby))
}

// replaceOnClose is the replacement by identity in the other order (issue
// #41): the successor joined first, while its predecessors' connection was
// still open or unknown to this instance (carried over by a takeover whose
// observer had not seen the close yet, a close told by another instance
// after the join), and now the connection closed is theirs. The members
// whose latest request came on closed are fenced at once if a member of the
// other protocol with their process id is in the group and not gone from
// the wire itself (connected, or unknown after a failover), and
// every member of their protocol with that process id is gone from the
// wire: the same rule as at a join (guard 4, all of a process's members
// together), so a twin still connected keeps its members. Their tasks go
// back to the assignor in the new target; the successor's process, which
// holds their state, is where the sticky assignor looks first. It reports
// whether it fenced any.
func (ch *Change) replaceOnClose(closed <-chan struct{}) bool {
	g := ch.Group
	pids := map[string]bool{}
	for id, c := range g.Mem.conns {
		m := g.Members[id]
		if c.closed != closed || m == nil || m.Departed() {
			continue
		}
		if pid := m.ProcessID(); pid != "" && pid != nilProcessID {
			pids[pid] = true
		}
	}
	// In a fixed order: the records of one change replay the same way.
	order := make([]string, 0, len(pids))
	for pid := range pids {
		order = append(order, pid)
	}
	sort.Strings(order)
	replaced := false
	for _, pid := range order {
		var olds []*Member
		var successor *Member
		for _, m := range g.Members {
			if m.ProcessID() != pid || m.Departed() {
				continue
			}
			if g.Mem.conns[m.ID].closed == closed {
				olds = append(olds, m)
			}
		}
		if len(olds) == 0 {
			continue
		}
		classic := olds[0].IsClassic()
		gone := true
		for _, m := range g.Members {
			if m.ProcessID() != pid || m.Departed() {
				continue
			}
			switch {
			case m.IsClassic() != classic:
				if !g.connGone(m.ID) && (successor == nil || m.ID < successor.ID) {
					successor = m
				}
			case !g.connGone(m.ID):
				gone = false // a member of the process is still connected
			}
		}
		if successor == nil || !gone {
			continue
		}
		// Every member of the process gone: those on other closed
		// connections too (one per stream thread).
		olds = olds[:0]
		for _, m := range g.Members {
			if m.ProcessID() == pid && !m.Departed() && m.IsClassic() == classic {
				olds = append(olds, m)
			}
		}
		sort.Slice(olds, func(i, j int) bool { return olds[i].ID < olds[j].ID })
		var moved TaskSets
		ids := make([]string, len(olds))
		for i, o := range olds {
			moved = unionSets(moved, o.CurrentAssignment().Assigned)
			ids[i] = o.ID
		}
		ch.logInfo(successor.ID).Ev(EventMemberReplaced).Strs("replaced_members", ids).Str("key", "process").Str("process", pid).
			Int("active_tasks", TasksCount(moved.Active)).Int("standby_tasks", TasksCount(moved.Standby)).
			Str("reason", "replaced by identity (process)").
			Msgf("[GroupId %s][MemberId %s] The connections of members %s of process %s closed after member %s of that process joined using the other protocol: they are fenced (replaced by identity (process)); %d active and %d standby tasks go back to the assignor.",
				g.ID, successor.ID, strings.Join(ids, ", "), pid, successor.ID, TasksCount(moved.Active), TasksCount(moved.Standby))
		for _, o := range olds {
			why := "its process is replaced by member " + successor.ID + " of the same process id, which joined before its connection closed"
			if o.IsClassic() {
				ch.fenceClassic(o, why)
			} else {
				ch.fenceMember(o, why)
			}
		}
		replaced = true
	}
	return replaced
}
