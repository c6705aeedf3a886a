package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// streamsKeyDoc documents one key of the streams: section for the full
// reference (--help-all, streamshift config reference): its meaning and
// default are the coordinator's, where Kafka's are written once.
func streamsKeyDoc(key string) (meaning, def string) {
	name := strings.TrimPrefix(key, streamsKeyPrefix)
	g, b := streams.DefaultGroupConfig(), streams.DefaultBounds()
	ms := func(d time.Duration) string { return fmt.Sprint(d.Milliseconds()) }
	switch name {
	case streams.KeyMaxSize:
		return "Kafka's group.streams.max.size: members of one streams group at most", "none (no limit)"
	case streams.KeyMinSessionTimeout:
		return "Kafka's group.streams.min.session.timeout.ms: the lowest session timeout a group may set", ms(b.MinSessionTimeout)
	case streams.KeyMaxSessionTimeout:
		return "Kafka's group.streams.max.session.timeout.ms: the highest session timeout a group may set", ms(b.MaxSessionTimeout)
	case streams.KeyMinHeartbeatInterval:
		return "Kafka's group.streams.min.heartbeat.interval.ms: the lowest heartbeat interval a group may set", ms(b.MinHeartbeatInterval)
	case streams.KeyMaxHeartbeatInterval:
		return "Kafka's group.streams.max.heartbeat.interval.ms: the highest heartbeat interval a group may set", ms(b.MaxHeartbeatInterval)
	}
	defs := map[string]string{
		streams.KeySessionTimeout:                  ms(g.SessionTimeout),
		streams.KeyHeartbeatInterval:               ms(g.HeartbeatInterval),
		streams.KeyNumStandbyReplicas:              fmt.Sprint(g.NumStandbyReplicas),
		streams.KeyInitialRebalanceDelay:           ms(g.InitialRebalanceDelay),
		streams.KeyAssignmentInterval:              ms(g.AssignmentInterval),
		streams.KeyTaskOffsetInterval:              ms(g.TaskOffsetInterval),
		streams.KeyNumWarmupReplicas:               fmt.Sprint(g.NumWarmupReplicas),
		streams.KeyAcceptableRecoveryLag:           fmt.Sprint(g.AcceptableRecoveryLag),
		streams.KeyRackAwareAssignmentTags:         "empty",
		streams.KeyReconciliationHeartbeatInterval: ms(g.ReconciliationHeartbeatInterval),
	}
	for _, d := range streams.GroupConfigDefs {
		if d.Key == name {
			owner := "Kafka's group.streams." + name
			if name == streams.KeyReconciliationHeartbeatInterval {
				owner = "streamshift's own, beyond Kafka 4.4"
			}
			doc := strings.TrimSuffix(d.Doc, ".")
			if doc != "" {
				doc = strings.ToLower(doc[:1]) + doc[1:] // a sentence of Kafka's, after a colon
			}
			return owner + ": " + doc, defs[name]
		}
	}
	return "Kafka's group.streams." + name, "Kafka's"
}
