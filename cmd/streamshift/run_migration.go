package main

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/coordinator/proxyadapter"
	"github.com/streamshift/streamshift/proxy"
)

// startMigration serves classic Kafka Streams members of streams groups and
// the online migration between the protocols (migration.policy): the
// classic group APIs of p go through the translator, and a streams join to
// a live classic group upstream takes it over when the policy allows.
//
// heartbeat is the streams groups' default heartbeat interval: a streams
// member heartbeats within it, so after a restart without the durable log
// the classic members of a group wait two of them for one to come back.
func startMigration(cfg *config.Config, p *proxy.Proxy, ad *proxyadapter.Adapter, ctl *kgo.Client, heartbeat time.Duration, log zerolog.Logger) error {
	policy, err := cfg.Migration.TranslateConfig()
	if err != nil {
		return err
	}
	if _, err := ad.EnableMigration(p, proxyadapter.MigrationOptions{Policy: policy, Client: ctl, RecoveryWindow: 2 * heartbeat}); err != nil {
		return fmt.Errorf("online migration: %w", err)
	}
	log.Info().Str("migration_policy", policy.Policy.String()).Int("group_policies", len(policy.Groups)).Msg("online migration ready")
	return nil
}
