package proxy

// Instances of two releases may share a cluster during an upgrade, and a
// group request any of them intercepts may be carried to the group's
// owner, which decodes it with its own interceptors. So each instance
// publishes the highest version of every key it intercepts (ServedVersions,
// in the instance group), and every instance advertises to its clients at
// most the lowest of them (SetClusterVersions): no client sends a version
// an owner cannot decode (docs/one-address.md §4, "Mixed releases").

// ServedVersions is the highest version of each key this proxy intercepts.
func (p *Proxy) ServedVersions() map[int16]int16 {
	m := p.reg.snap.Load()
	if m == nil {
		return map[int16]int16{}
	}
	out := make(map[int16]int16, len(*m))
	for k, reg := range *m {
		out[k] = reg.maxVersion
	}
	return out
}

// SetClusterVersions caps what ApiVersions answers advertise from now on:
// caps[key] is the highest version of key every instance of the cluster
// that intercepts it serves. A connection keeps what it was told before.
func (p *Proxy) SetClusterVersions(caps map[int16]int16) {
	c := make(map[int16]int16, len(caps))
	for k, v := range caps {
		c[k] = v
	}
	p.clusterCaps.Store(&c)
}

func (p *Proxy) clusterVersions() map[int16]int16 {
	if c := p.clusterCaps.Load(); c != nil {
		return *c
	}
	return nil
}
