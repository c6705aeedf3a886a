package streams

import (
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	bad := []func(*Config){
		func(c *Config) { c.Defaults.SessionTimeout = 10 * time.Second },
		func(c *Config) { c.Defaults.SessionTimeout = 61 * time.Second },
		func(c *Config) { c.Defaults.HeartbeatInterval = time.Second },
		func(c *Config) { c.Defaults.NumStandbyReplicas = 3 },
		func(c *Config) { c.Defaults.AssignmentInterval = 16 * time.Second },
		func(c *Config) { c.Defaults.InitialRebalanceDelay = -time.Second },
		func(c *Config) { c.Defaults.RackAwareAssignmentTags = []string{" "} },
		func(c *Config) { c.MaxGroupSize = -1 },
		func(c *Config) {
			two := 5
			c.Groups = map[string]GroupConfigOverride{"g": {NumStandbyReplicas: &two}}
		},
		func(c *Config) { c.Bounds = Bounds{MinSessionTimeout: time.Second} },
	}
	for i, mut := range bad {
		c := DefaultConfig()
		mut(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("case %d: accepted %+v", i, c)
		}
	}
	// Lower bounds, as Kafka's system tests configure them, admit a 10 s session.
	c := DefaultConfig()
	c.Defaults.SessionTimeout = 10 * time.Second
	c.Bounds = DefaultBounds()
	c.Bounds.MinSessionTimeout = 10 * time.Second
	if err := c.Validate(); err != nil {
		t.Fatalf("lowered bounds: %v", err)
	}
	// Overrides apply on top of the defaults.
	ten := 10 * time.Second
	c.Groups = map[string]GroupConfigOverride{"g": {SessionTimeout: &ten}}
	if got := c.Group("g").SessionTimeout; got != ten {
		t.Fatalf("override: %v", got)
	}
	if got := c.Group("other").HeartbeatInterval; got != DefaultHeartbeatInterval {
		t.Fatalf("default: %v", got)
	}
}
