package main

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/migration"
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
// name the apps' application ids, unknown at start: groupACLCheck asks
// them when a group comes.
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
	missing := logMissingACLs(cfg, log, res, "ACL check: streamshift's principal lacks an ACL its configuration needs (streamshift acls prints them all)")
	if missing == 0 {
		log.Info().Int("acls", len(res)).Msg("ACL check: streamshift's principal has the ACLs of the durable group log")
	}
}

// logMissingACLs logs each missing row of res at warn with msg, what
// breaks without it and the command granting it, and returns how many.
func logMissingACLs(cfg *config.Config, log zerolog.Logger, res []upstream.ACLCheck, msg string) int {
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
				Msg(msg)
		case upstream.ACLUnknown:
			log.Debug().Str("acl", r.ACL.String()).AnErr("reason", r.Err).Msg("ACL check: not asked")
		case upstream.ACLNotNeeded:
			log.Info().Str("acl", r.ACL.String()).Msg("ACL check: not needed, the topic exists")
		}
	}
	return missing
}

// maxACLCheckedGroups bounds the groups groupACLCheck remembers: past it,
// new groups are not asked about (a cluster of that many apps has seen its
// ACLs by then).
const maxACLCheckedGroups = 10000

// groupACLCheck asks, once per streams group and process, about the rows
// of a group streamshift starts serving (READ on the group, DESCRIBE and
// CREATE on the topics prefixed by its id: the names are known only when
// it comes), and logs each missing one at warn as checkACLs does. It hears
// the coordinator's group events; the first event of a group starts the
// check in the background (an event must return at once).
type groupACLCheck struct {
	cfg *config.Config
	log zerolog.Logger

	mu   sync.Mutex
	seen map[string]bool
}

func newGroupACLCheck(cfg *config.Config, log zerolog.Logger) *groupACLCheck {
	return &groupACLCheck{cfg: cfg, log: log, seen: map[string]bool{}}
}

func (g *groupACLCheck) GroupEvent(e coordinator.GroupEvent) {
	if e.Group == "" {
		return
	}
	g.mu.Lock()
	first := !g.seen[e.Group] && len(g.seen) < maxACLCheckedGroups
	if first {
		g.seen[e.Group] = true
	}
	g.mu.Unlock()
	if first {
		go g.check(e.Group)
	}
}

func (g *groupACLCheck) MigrationEvent(migration.MigrationEvent) {}

func (g *groupACLCheck) check(group string) {
	var rows []upstream.ACL
	for _, r := range upstream.RequiredACLs(upstream.ACLNeeds{Groups: []string{group}}) {
		if !strings.Contains(r.Name, "<") {
			rows = append(rows, r)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), aclCheckTimeout)
	defer cancel()
	res, err := upstream.CheckACLs(ctx, controlPlaneOpts(g.cfg), rows)
	if err != nil {
		g.log.Debug().Err(err).Str("group", group).Msg("ACL check: could not ask the broker about a group's ACLs")
		return
	}
	logMissingACLs(g.cfg, g.log.With().Str("group", group).Logger(), res,
		"ACL check: streamshift's principal lacks an ACL this streams group needs (streamshift acls --group prints them)")
}
