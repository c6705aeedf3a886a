package anchor

// Current is the group's anchor's membership upstream if it is a synced
// member now, without waiting (Generation waits); false otherwise.
func (m *Manager) Current(group string) (Generation, bool) {
	m.mu.Lock()
	a := m.anchors[group]
	m.mu.Unlock()
	if a == nil {
		return Generation{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gen, a.synced
}
