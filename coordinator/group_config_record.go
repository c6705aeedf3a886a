package coordinator

import "fmt"

// groupConfigValue renders an override; nil when it sets nothing (the
// record is then a tombstone).
func groupConfigValue(o GroupConfigOverride) *GroupConfigValue {
	if o.empty() {
		return nil
	}
	set := o.apply(GroupConfig{})
	v := &GroupConfigValue{}
	for _, d := range groupConfigDefs {
		if o.has(d.key) {
			v.Configs = append(v.Configs, KeyValue{groupConfigPrefix + d.key, set.value(d.key)})
		}
	}
	return v
}

// override parses the value back. A bad value is an error (the record
// comes back from the network); a config name this release does not know is
// left out and returned in unknown: a newer streamshift wrote it, and
// failing the load over it would make rolling streamshift back impossible.
func (v *GroupConfigValue) override() (o GroupConfigOverride, unknown []string, err error) {
	for _, kv := range v.Configs {
		d, ok := groupConfigDefOf(kv.Key)
		if !ok {
			unknown = append(unknown, kv.Key)
			continue
		}
		if err := d.check(kv.Value); err != nil {
			return o, unknown, fmt.Errorf("group config %s: %v", kv.Key, err)
		}
		if err := o.set(d.key, kv.Value); err != nil {
			return o, unknown, fmt.Errorf("group config %s=%q: %w", kv.Key, kv.Value, err)
		}
	}
	return o, unknown, nil
}

// loadGroupConfigs applies the group config records among records to the
// coordinator's configuration (a stored config wins over the file's
// per-group settings: it is newer) and returns the other records.
func (c *Coordinator) loadGroupConfigs(records []Record) ([]Record, error) {
	rest := records[:0:0]
	var groups map[string]GroupConfigOverride
	for _, r := range records {
		if r.Type != RecordGroupConfig {
			rest = append(rest, r)
			continue
		}
		if groups == nil {
			c.mu.Lock()
			groups = make(map[string]GroupConfigOverride, len(c.cfg.Groups))
			for k, v := range c.cfg.Groups {
				groups[k] = v
			}
			c.mu.Unlock()
		}
		if r.Tombstone() {
			delete(groups, r.GroupID)
			continue
		}
		v, ok := r.Value.(*GroupConfigValue)
		if !ok {
			return nil, fmt.Errorf("load %s of group %s: value %T", r.Type, r.GroupID, r.Value)
		}
		o, unknown, err := v.override()
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
