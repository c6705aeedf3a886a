package streams

import "fmt"

// groupConfigValue renders an override; nil when it sets nothing (the
// record is then a tombstone).
func NewGroupConfigValue(o GroupConfigOverride) *GroupConfigValue {
	if o.Empty() {
		return nil
	}
	set := o.Apply(GroupConfig{})
	v := &GroupConfigValue{}
	for _, d := range GroupConfigDefs {
		if o.Has(d.Key) {
			v.Configs = append(v.Configs, KeyValue{GroupConfigPrefix + d.Key, set.Value(d.Key)})
		}
	}
	return v
}

// Override parses the value back. A bad value is an error (the record
// comes back from the network); a config name this release does not know is
// left out and returned in unknown: a newer streamshift wrote it, and
// failing the load over it would make rolling streamshift back impossible.
func (v *GroupConfigValue) Override() (o GroupConfigOverride, unknown []string, err error) {
	for _, kv := range v.Configs {
		d, ok := GroupConfigDefOf(kv.Key)
		if !ok {
			unknown = append(unknown, kv.Key)
			continue
		}
		if err := d.Check(kv.Value); err != nil {
			return o, unknown, fmt.Errorf("group config %s: %v", kv.Key, err)
		}
		if err := o.Set(d.Key, kv.Value); err != nil {
			return o, unknown, fmt.Errorf("group config %s=%q: %w", kv.Key, kv.Value, err)
		}
	}
	return o, unknown, nil
}
