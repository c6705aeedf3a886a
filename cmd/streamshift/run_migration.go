package main

import (
	"fmt"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/route"
)

// startMigration serves classic Kafka Streams members of streams groups and
// the online migration between the protocols (migration.policy): the
// classic group APIs of p go through the translator, and a streams join to
// a live classic group upstream takes it over when the policy allows.
func startMigration(cfg *config.Config, p *proxy.Proxy, ad *route.Adapter, ctl *kgo.Client, log zerolog.Logger) error {
	policy, err := cfg.Migration.TranslateConfig()
	if err != nil {
		return err
	}
	if _, err := ad.EnableMigration(p, route.MigrationOptions{Policy: policy, Client: ctl}); err != nil {
		return fmt.Errorf("online migration: %w", err)
	}
	log.Info().Str("migration_policy", policy.Policy.String()).Int("group_policies", len(policy.Groups)).Msg("online migration ready")
	return nil
}
