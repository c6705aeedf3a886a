package streams

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// groupConfigField is where one per-group setting lives: its field in
// GroupConfig and in GroupConfigOverride (nil there: the default applies),
// and how its value reads and prints. Every per-key operation (Value, Has,
// Unset, Apply, Set and ParseConfig's defaults) goes through it, so a new
// setting is one row of GroupConfigDefs.
type groupConfigField interface {
	format(c *GroupConfig) string
	parse(c *GroupConfig, v string) error
	override(o *GroupConfigOverride, v string) error
	overridden(o *GroupConfigOverride) bool
	unset(o *GroupConfigOverride)
	apply(o *GroupConfigOverride, c *GroupConfig)
}

// scalarField is a setting of one value: in an override, a pointer.
type scalarField[T any] struct {
	inConfig   func(*GroupConfig) *T
	inOverride func(*GroupConfigOverride) **T
	read       func(string) (T, error)
	print      func(T) string
}

func (f scalarField[T]) format(c *GroupConfig) string { return f.print(*f.inConfig(c)) }

func (f scalarField[T]) parse(c *GroupConfig, v string) error {
	n, err := f.read(v)
	if err == nil {
		*f.inConfig(c) = n
	}
	return err
}

func (f scalarField[T]) override(o *GroupConfigOverride, v string) error {
	n, err := f.read(v)
	if err == nil {
		*f.inOverride(o) = &n
	}
	return err
}

func (f scalarField[T]) overridden(o *GroupConfigOverride) bool { return *f.inOverride(o) != nil }

func (f scalarField[T]) unset(o *GroupConfigOverride) { *f.inOverride(o) = nil }

func (f scalarField[T]) apply(o *GroupConfigOverride, c *GroupConfig) {
	if p := *f.inOverride(o); p != nil {
		*f.inConfig(c) = *p
	}
}

// msField is a duration set in milliseconds.
func msField(inConfig func(*GroupConfig) *time.Duration, inOverride func(*GroupConfigOverride) **time.Duration) groupConfigField {
	return scalarField[time.Duration]{inConfig, inOverride, readMs, func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }}
}

func intField(inConfig func(*GroupConfig) *int, inOverride func(*GroupConfigOverride) **int) groupConfigField {
	return scalarField[int]{inConfig, inOverride, strconv.Atoi, strconv.Itoa}
}

func longField(inConfig func(*GroupConfig) *int64, inOverride func(*GroupConfigOverride) **int64) groupConfigField {
	return scalarField[int64]{inConfig, inOverride,
		func(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) },
		func(n int64) string { return strconv.FormatInt(n, 10) }}
}

func readMs(v string) (time.Duration, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("milliseconds: %w", err)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// rackAwareAssignmentTagsField is streams.rack.aware.assignment.tags, a
// list: in an override nil is the default and empty a set empty list.
type rackAwareAssignmentTagsField struct{}

func (rackAwareAssignmentTagsField) format(c *GroupConfig) string {
	return strings.Join(c.RackAwareAssignmentTags, ",")
}

func (rackAwareAssignmentTagsField) parse(c *GroupConfig, v string) error {
	c.RackAwareAssignmentTags = ParseList(v)
	return nil
}

func (rackAwareAssignmentTagsField) override(o *GroupConfigOverride, v string) error {
	o.RackAwareAssignmentTags = ParseList(v)
	if o.RackAwareAssignmentTags == nil {
		o.RackAwareAssignmentTags = []string{}
	}
	return nil
}

func (rackAwareAssignmentTagsField) overridden(o *GroupConfigOverride) bool {
	return o.RackAwareAssignmentTags != nil
}

func (rackAwareAssignmentTagsField) unset(o *GroupConfigOverride) { o.RackAwareAssignmentTags = nil }

func (rackAwareAssignmentTagsField) apply(o *GroupConfigOverride, c *GroupConfig) {
	if o.RackAwareAssignmentTags != nil {
		c.RackAwareAssignmentTags = o.RackAwareAssignmentTags
	}
}
