package migration

// Events hears the phases of a group's takeover and hand-back, for a
// capture (package capture, wired by cmd/streamshift), so that a capture
// says when each migration step began and ended and why one failed.
// MigrationEvent must return at once. Without Options.Events nothing is
// told.
type Events interface {
	MigrationEvent(MigrationEvent)
}

// MigrationEvent is one phase of a migration.
type MigrationEvent struct {
	// Kind is one of the Event* constants.
	Kind, Group string
	// Fields are what the phase knows (classic members, group epoch,
	// held joins).
	Fields map[string]any
	// Err is why a phase failed.
	Err error
}

// Phases of a migration.
const (
	EventTakeoverStarted    = "takeover-started"
	EventTakeoverDone       = "takeover-done"
	EventTakeoverFailed     = "takeover-failed"
	EventHandBackStarted    = "hand-back-started"
	EventHandBackAnchorLeft = "hand-back-anchor-left"
	EventHandBackDone       = "hand-back-done"
	EventHandBackFailed     = "hand-back-failed"
)

// tell tells ev, if any.
func tell(ev Events, kind, group string, err error, fields map[string]any) {
	if ev != nil {
		ev.MigrationEvent(MigrationEvent{Kind: kind, Group: group, Fields: fields, Err: err})
	}
}
