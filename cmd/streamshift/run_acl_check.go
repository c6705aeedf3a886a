package main

import (
	"context"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/upstream"
)

// aclCheckTimeout bounds the start-up check: a handful of requests.
const aclCheckTimeout = 10 * time.Second

// checkACLs asks the broker, once at start, whether streamshift's own
// principal may do what its configured features need (upstream.CheckACLs:
// by the operations themselves, no DescribeAcls) and logs each ACL it
// lacks at warn, with what breaks without it and the kafka-acls command
// granting it. It never fails the start: a feature without its ACL fails
// where it is used, as before, and says so there. The streams groups' rows
// name the apps' application ids, unknown at start, so only the durable
// log's are asked.
func checkACLs(ctx context.Context, cfg *config.Config, log zerolog.Logger) {
	if !cfg.Coordinator.DurableLog {
		return
	}
	var rows []upstream.ACL
	for _, r := range upstream.RequiredACLs(aclNeeds(cfg, nil, nil)) {
		if r.Feature == upstream.FeatureDurableLog {
			rows = append(rows, r)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, aclCheckTimeout)
	defer cancel()
	res, err := upstream.CheckACLs(ctx, controlPlaneOpts(cfg), rows)
	if err != nil {
		log.Warn().Err(err).Msg("ACL check: could not ask the broker what streamshift's principal may do")
		return
	}
	principal := "User:" + cfg.ControlPlane.SASLUsername
	if cfg.ControlPlane.SASLUsername == "" {
		principal = "User:<streamshift's principal>"
	}
	missing := 0
	for _, r := range res {
		switch r.State {
		case upstream.ACLMissing:
			missing++
			log.Warn().Str("feature", r.Feature).Str("acl", r.ACL.String()).Str("from", r.From).Str("breaks", r.Breaks).
				Str("grant", "kafka-acls.sh --bootstrap-server "+strings.Join(cfg.Upstream, ",")+" "+strings.Join(r.KafkaACLsArgs(principal), " ")).
				Msg("ACL check: streamshift's principal lacks an ACL its configuration needs (streamshift acls prints them all)")
		case upstream.ACLUnknown:
			log.Debug().Str("acl", r.ACL.String()).AnErr("reason", r.Err).Msg("ACL check: not asked")
		}
	}
	if missing == 0 {
		log.Info().Int("acls", len(res)).Msg("ACL check: streamshift's principal has the ACLs of the durable group log")
	}
}
