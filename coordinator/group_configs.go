package coordinator

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// DescribeGroupConfigs returns the streams.* configs of a group with their
// effective values, in Kafka's order; names limits the result (names Kafka
// does not know are left out, as Kafka does); empty means all.
func (c *Coordinator) DescribeGroupConfigs(groupID string, names []string) []streams.GroupConfigEntry {
	c.mu.Lock()
	eff := c.cfg.Group(groupID)
	o, hasO := c.cfg.Groups[groupID]
	c.mu.Unlock()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []streams.GroupConfigEntry
	for _, d := range streams.GroupConfigDefs {
		name := streams.GroupConfigPrefix + d.Key
		if len(want) > 0 && !want[name] {
			continue
		}
		out = append(out, streams.GroupConfigEntry{Name: name, Value: eff.Value(d.Key), Overridden: hasO && o.Has(d.Key), Type: d.Type, Doc: d.Doc})
	}
	return out
}

// HasGroupConfigs reports whether the group has per-group overrides (set
// by AlterGroupConfigs or the configuration file).
func (c *Coordinator) HasGroupConfigs(groupID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.cfg.Groups[groupID]
	return ok
}

// DefaultGroupConfigValue is the value a per-group config has without an
// override.
func (c *Coordinator) DefaultGroupConfigValue(name string) string {
	d, ok := streams.GroupConfigDefOf(name)
	if !ok {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg.Defaults.Value(d.Key)
}

// AlterGroupConfigs applies IncrementalAlterConfigs operations to a group's
// streams.* configs, validated as Kafka validates group configs (type and
// lower bound per config, then the broker-level bounds) with Kafka's
// messages; with validateOnly nothing changes. The new values apply from the
// group's next heartbeat (a standby count change bumps the group epoch).
//
// The overrides are stored in the group log (RecordGroupConfig) before they
// apply, so with a durable log they survive a restart; like Kafka's group
// configs they outlive the group.
func (c *Coordinator) AlterGroupConfigs(groupID string, alts []streams.GroupConfigAlteration, validateOnly bool) *streams.ConfigError {
	c.configMu.Lock()
	defer c.configMu.Unlock()
	c.mu.Lock()
	o, err := c.cfg.AlteredGroupConfig(groupID, alts)
	c.mu.Unlock()
	if err != nil || validateOnly {
		return err
	}
	if err := c.storeGroupConfig(groupID, o); err != nil {
		return &streams.ConfigError{Err: kerr.UnknownServerError, Message: err.Error()}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	groups := make(map[string]streams.GroupConfigOverride, len(c.cfg.Groups)+1)
	for k, v := range c.cfg.Groups {
		groups[k] = v
	}
	if o.Empty() {
		delete(groups, groupID)
	} else {
		groups[groupID] = o
	}
	c.cfg.Groups = groups
	return nil
}

// SetGroupConfig sets (or, with nil, removes) a group's overrides. The new
// configuration applies from the group's next heartbeat; a change of the
// standby replicas bumps the group epoch then.
func (c *Coordinator) SetGroupConfig(groupID string, o *streams.GroupConfigOverride) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o == nil {
		delete(c.cfg.Groups, groupID)
		return nil
	}
	if err := o.Apply(c.cfg.Defaults).ValidateWithin(c.cfg.ConfigBounds()); err != nil {
		return fmt.Errorf("streams group %q: %w", groupID, err)
	}
	groups := make(map[string]streams.GroupConfigOverride, len(c.cfg.Groups)+1)
	for k, v := range c.cfg.Groups {
		groups[k] = v
	}
	groups[groupID] = *o
	c.cfg.Groups = groups
	return nil
}

// storeGroupConfig appends a group's new overrides to the log, so they
// survive a restart when the log is durable.
func (c *Coordinator) storeGroupConfig(groupID string, o streams.GroupConfigOverride) error {
	r := streams.NewGroupConfigRecord(groupID, streams.NewGroupConfigValue(o))
	if err := c.log.Append(groupID, []streams.Record{r}); err != nil {
		c.logAppendFailure(groupID, 1, err)
		return fmt.Errorf("store configs of group %s: %w", groupID, err)
	}
	return nil
}
