package migration

import (
	"fmt"
	"sort"
	"strings"
)

// MigrationPolicy says which online conversions of a group are allowed, as
// Kafka's group.consumer.migration.policy does for consumer groups:
// upgrade is the takeover of a live classic Kafka Streams group when its
// first streams-protocol member joins; downgrade is the hand-back to the
// upstream classic group when its last streams-protocol member leaves while
// classic members remain. Classic members of a group that already is a
// streams group are served under every policy.
type MigrationPolicy int8

const (
	MigrationBidirectional MigrationPolicy = iota // the default
	MigrationUpgrade
	MigrationDowngrade
	MigrationDisabled
)

func (p MigrationPolicy) String() string {
	switch p {
	case MigrationUpgrade:
		return "upgrade"
	case MigrationDowngrade:
		return "downgrade"
	case MigrationDisabled:
		return "disabled"
	}
	return "bidirectional"
}

// AllowsUpgrade reports whether a classic group may become a streams group.
func (p MigrationPolicy) AllowsUpgrade() bool {
	return p == MigrationBidirectional || p == MigrationUpgrade
}

// AllowsDowngrade reports whether a streams group may go back to classic.
func (p MigrationPolicy) AllowsDowngrade() bool {
	return p == MigrationBidirectional || p == MigrationDowngrade
}

// ParseMigrationPolicy reads a policy name, case-insensitively as Kafka does.
func ParseMigrationPolicy(s string) (MigrationPolicy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "bidirectional":
		return MigrationBidirectional, nil
	case "upgrade":
		return MigrationUpgrade, nil
	case "downgrade":
		return MigrationDowngrade, nil
	case "disabled":
		return MigrationDisabled, nil
	}
	return 0, fmt.Errorf("migration policy %q: want disabled, upgrade, downgrade or bidirectional", s)
}

// Config keys: KeyMigrationPolicy sets the default; "group.<id>.migration.policy"
// overrides it for one group (the coordinator's per-group key form).
const (
	KeyMigrationPolicy = "migration.policy"
	groupKeyPrefix     = "group."
)

// MigrationConfig is the migration policy, global and per group.
type MigrationConfig struct {
	Policy MigrationPolicy
	Groups map[string]MigrationPolicy
}

// PolicyFor is the policy of one group.
func (c MigrationConfig) PolicyFor(group string) MigrationPolicy {
	if p, ok := c.Groups[group]; ok {
		return p
	}
	return c.Policy
}

// ParseMigrationConfig reads migration.policy and group.<id>.migration.policy
// from Kafka-style string keys; other keys are ignored (they belong to the
// coordinator's configuration). A "streams." prefix is allowed, as there.
func ParseMigrationConfig(kv map[string]string) (MigrationConfig, error) {
	cfg := MigrationConfig{Policy: MigrationBidirectional}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		key := strings.TrimPrefix(k, "streams.")
		switch {
		case key == KeyMigrationPolicy:
			p, err := ParseMigrationPolicy(kv[k])
			if err != nil {
				return cfg, fmt.Errorf("%s: %w", k, err)
			}
			cfg.Policy = p
		case strings.HasPrefix(key, groupKeyPrefix) && strings.HasSuffix(key, "."+KeyMigrationPolicy):
			group := strings.TrimSuffix(strings.TrimPrefix(key, groupKeyPrefix), "."+KeyMigrationPolicy)
			if group == "" {
				return cfg, fmt.Errorf("%s: empty group id", k)
			}
			p, err := ParseMigrationPolicy(kv[k])
			if err != nil {
				return cfg, fmt.Errorf("%s: %w", k, err)
			}
			if cfg.Groups == nil {
				cfg.Groups = map[string]MigrationPolicy{}
			}
			cfg.Groups[group] = p
		}
	}
	return cfg, nil
}
