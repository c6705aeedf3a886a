package main

import (
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/route"
)

// migrationOptions turn on the service of classic Kafka Streams members of
// streams groups and the online migration between the protocols
// (migration.policy): the classic group APIs go through the translator, and
// a streams join to a live classic group upstream takes it over when the
// policy allows. The migration is always on; the policy says which way a
// group may move.
//
// heartbeat is the streams groups' default heartbeat interval: a streams
// member heartbeats within it, so after a restart without the durable log
// the classic members of a group wait two of them for one to come back.
func migrationOptions(cfg *config.Config, ctl *kgo.Client, heartbeat time.Duration) (*route.MigrationOptions, error) {
	policy, err := cfg.Migration.TranslateConfig()
	if err != nil {
		return nil, err
	}
	return &route.MigrationOptions{Policy: policy, Client: ctl, RecoveryWindow: 2 * heartbeat}, nil
}

// logMigration says which migration policy the routes serve with.
func logMigration(o *route.MigrationOptions, log zerolog.Logger) {
	log.Info().Str("migration_policy", o.Policy.Policy.String()).Int("group_policies", len(o.Policy.Groups)).Msg("online migration ready")
}
