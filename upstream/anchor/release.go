package anchor

import "github.com/streamshift/streamshift/internal/lockedmap"

// Release stops the group's anchor without leaving the upstream group: the
// group moved to another streamshift instance of the cluster, whose anchor
// joins under the same static instance id and takes this one's place
// (the broker fences the old member), so the upstream group never looks
// Empty while its group moves. A later Ensure starts the anchor again.
func (m *Manager) Release(group string) {
	if a := lockedmap.Pop(&m.mu, m.anchors, group); a != nil {
		a.cancel()
		<-a.done
	}
}

// forget drops a stopped anchor from the manager unless a newer one of its
// group replaced it there.
func (m *Manager) forget(a *anchor) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.anchors[a.group] == a {
		delete(m.anchors, a.group)
	}
}
