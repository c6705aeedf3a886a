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
	// Disconnect is migration.disconnect.expiry.heartbeats.
	Disconnect Disconnect `koanf:"disconnect"`
}

// Disconnect is the disconnect expiry (docs/fast-roll.md §5): a dynamic
// member of a served group (either protocol) whose connection closed and
// that sent no request since is fenced Expiry.Heartbeats heartbeat
// intervals after the close, unless its session expires first; 0 turns it
// off. It makes a rolling step of a stateless app (a new process id every
// start, so no replacement by identity) cost a few heartbeats, not a
// session timeout.
type Disconnect struct {
	Expiry struct {
		Heartbeats int `koanf:"heartbeats"`
	} `koanf:"expiry"`
}

// DefaultMigration allows both directions, Kafka's default, and expires
// disconnected members after 3 heartbeat intervals.
func DefaultMigration() Migration {
	m := Migration{Policy: "bidirectional"}
	m.Disconnect.Expiry.Heartbeats = 3
	return m
}

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
	var errs []string
	if _, err := m.TranslateConfig(); err != nil {
		errs = append(errs, err.Error())
	}
	if k := m.Disconnect.Expiry.Heartbeats; k < 0 {
		errs = append(errs, fmt.Sprintf("migration.disconnect.expiry.heartbeats %d is negative (0 turns the expiry off)", k))
	}
	return errs
}
