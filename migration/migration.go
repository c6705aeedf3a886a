package migration

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/translate"
)

// Options configure the online migration.
type Options struct {
	// Coordinator serves the streams groups; its Clock runs every timer
	// of the migration.
	Coordinator *coordinator.Coordinator
	// Ownership is the routes' ownership table: New installs the
	// takeover hook of its claims.
	Ownership *coordinator.Ownership
	Policy    MigrationConfig
	// Groups are the DescribeGroups and the fencing LeaveGroup through the
	// control-plane client (upstream.Groups).
	Groups UpstreamGroups
	// Anchors join and leave the groups' anchor members.
	Anchors Anchors
	// RequestTimeout bounds one control-plane request. Default 10s.
	RequestTimeout time.Duration
	// DrainTimeout bounds how long a takeover waits for the group's
	// forwarded requests. Default 15s, and never more than half the
	// takeover's hold limit (takeoverHoldLimit).
	DrainTimeout time.Duration
	// RecoveryWindow is how long the classic members of a group found
	// held by streamshift's anchor with no state here (a restart without
	// the durable log) wait for a streams member before the group is
	// handed back (recovery.go). Default 10s: twice Kafka's default
	// streams heartbeat interval.
	RecoveryWindow time.Duration
	Log            zerolog.Logger
	// Events, if set, hears the phases of takeovers and hand-backs
	// (events.go).
	Events Events
	// RefreshMetadata, if set, fetches the cluster's topics into the
	// coordinator's metadata image; a takeover runs it first, so that
	// the topology is configured against the cluster as it is (a topic
	// deleted or recreated a moment ago) and a refusal is not the
	// image's lag.
	RefreshMetadata func(context.Context) error
}

// Migration is the online migration of the groups the routes see: the
// gate and drain, the observer of what goes upstream, the takeover of a
// live classic group when its first streams-protocol member joins
// (MaybeTakeOver), the hand-back of a group left with classic members only,
// and the restart recovery. Package route calls it from the handlers of
// the keys it gates, forwards or translates.
type Migration struct {
	o        Options
	c        *coordinator.Coordinator
	log      zerolog.Logger
	observer *ClassicObserver
	up       *migrationUpstream
	t        *translate.Translator
	takeover *Takeover
	recovery *Recovery
}

// New returns the online migration and installs the ownership's takeover
// hook.
func New(o Options) (*Migration, error) {
	if o.Coordinator == nil || o.Ownership == nil || o.Groups == nil || o.Anchors == nil {
		return nil, fmt.Errorf("migration: coordinator, ownership, upstream groups and anchors are required")
	}
	o.RequestTimeout = cmp.Or(o.RequestTimeout, 10*time.Second)
	o.DrainTimeout = cmp.Or(o.DrainTimeout, 15*time.Second)
	o.RecoveryWindow = cmp.Or(o.RecoveryWindow, 10*time.Second)
	c := o.Coordinator
	m := &Migration{
		o:        o,
		c:        c,
		log:      o.Log,
		observer: NewClassicObserver(c),
		up:       &migrationUpstream{groups: o.Groups, anchors: o.Anchors, timeout: o.RequestTimeout, handOff: c, log: o.Log},
	}
	hb := &HandBack{Coordinator: c, Upstream: m.up, Migration: o.Policy, Events: o.Events}
	m.t = translate.New(translate.Options{Coordinator: c, HandBack: hb, Log: o.Log})
	hb.Translator = m.t
	m.recovery = newRecovery(m, o.RecoveryWindow)
	m.takeover = &Takeover{
		Coordinator: c,
		Upstream:    m.up,
		// The drain is part of the hold: past half the hold limit it
		// goes on, so that a forwarded request never answered (its
		// client gone) does not make every attempt give up.
		Gate:      coordinatorGate{c: c, drainTimeout: min(o.DrainTimeout, takeoverHoldLimit/2)},
		Observer:  m.observer,
		Migration: o.Policy,
		TakenOver: m.logTakenOver,
		Clock:     c,
		Log:       o.Log,
	}
	o.Ownership.SetTakeover(takeoverHook{m})
	return m, nil
}

// Observer is fed what the upstream answers the forwarded classic requests.
func (m *Migration) Observer() *ClassicObserver { return m.observer }

// Translator serves the classic members of the streams groups; its
// hand-backs are this migration's.
func (m *Migration) Translator() *translate.Translator { return m.t }

// Recovery is the restart recovery of groups held upstream by
// streamshift's anchor with no state here.
func (m *Migration) Recovery() *Recovery { return m.recovery }

// logTakenOver logs each classic member a takeover found upstream: how long
// before the takeover the upstream last renewed its session, and whether it
// was carried over (its session had not run out) with what was left of it.
func (m *Migration) logTakenOver(st streams.ClassicGroupState) {
	now := m.c.Now()
	for _, cm := range st.Members {
		session := time.Duration(cm.SessionTimeoutMs) * time.Millisecond
		ev := m.log.Info().Str("group", st.GroupID).Str("member", cm.MemberID).Str("client_id", cm.Client.ClientID).Dur("session_timeout", session)
		if cm.LastHeartbeat.IsZero() {
			ev.Msg("takeover: classic member carried over, its last heartbeat unknown: a whole session from now")
			continue
		}
		ago := now.Sub(cm.LastHeartbeat)
		ev = ev.Dur("last_heartbeat_ago", ago)
		if ago >= session {
			ev.Msg("takeover: classic member not carried over, its session ran out upstream; its tasks are free")
			continue
		}
		ev.Dur("session_left", session-ago).Msg("takeover: classic member carried over with what is left of its session")
	}
}
