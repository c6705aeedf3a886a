package anchor

// Release stops the group's anchor without leaving the upstream group: the
// group moved to another streamshift instance of the cluster, whose anchor
// joins under the same static instance id and takes this one's place
// (the broker fences the old member), so the upstream group never looks
// Empty while its group moves. A later Ensure starts the anchor again.
func (m *Manager) Release(group string) {
	m.mu.Lock()
	a := m.anchors[group]
	if a != nil {
		delete(m.anchors, group)
		m.stop(a)
	}
	m.mu.Unlock()
	if a != nil {
		<-a.done
	}
}
