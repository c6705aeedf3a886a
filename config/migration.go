package config

import (
	"fmt"
	"strings"

	"github.com/streamshift/streamshift/migration"
)

// Migration is the `migration:` section: which online conversions of a
// Kafka Streams group between the classic protocol (upstream) and the
// streams protocol (served here) are allowed, as Kafka's
// group.consumer.migration.policy does for consumer groups.
//
//	migration:
//	  policy: bidirectional            # disabled | upgrade | downgrade | bidirectional
//	  group-policies: "orders=upgrade,billing=disabled"
//
// or STREAMSHIFT_MIGRATION_POLICY / STREAMSHIFT_MIGRATION_GROUP_POLICIES.
// upgrade allows the takeover of a live classic group when its first
// streams-protocol member joins; downgrade the hand-back to the upstream
// classic group when its last streams-protocol member leaves while classic
// members remain.
type Migration struct {
	Policy string `koanf:"policy"`
	// GroupPolicies overrides Policy per group: comma-separated
	// group=policy pairs (a group id may not contain ',' or '=' here).
	GroupPolicies string `koanf:"group-policies"`
}

// DefaultMigration allows both directions, Kafka's default.
func DefaultMigration() Migration { return Migration{Policy: "bidirectional"} }

// TranslateConfig parses the section into the translator's policy.
func (m Migration) TranslateConfig() (migration.MigrationConfig, error) {
	kv := map[string]string{}
	if strings.TrimSpace(m.Policy) != "" {
		kv[migration.KeyMigrationPolicy] = m.Policy
	}
	for _, pair := range strings.Split(m.GroupPolicies, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		group, policy, ok := strings.Cut(pair, "=")
		group = strings.TrimSpace(group)
		if !ok || group == "" {
			return migration.MigrationConfig{}, fmt.Errorf("migration.group-policies %q: want group=policy", pair)
		}
		kv["group."+group+"."+migration.KeyMigrationPolicy] = strings.TrimSpace(policy)
	}
	cfg, err := migration.ParseMigrationConfig(kv)
	if err != nil {
		return migration.MigrationConfig{}, fmt.Errorf("migration: %w", err)
	}
	return cfg, nil
}

func (m Migration) validate() []string {
	if _, err := m.TranslateConfig(); err != nil {
		return []string{err.Error()}
	}
	return nil
}
