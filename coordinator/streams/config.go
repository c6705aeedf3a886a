package streams

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Config is the coordinator's configuration.
type Config struct {
	// Defaults apply to every group without an override.
	Defaults GroupConfig
	// MaxGroupSize is group.streams.max.size; 0 means no limit.
	MaxGroupSize int
	// Groups are per-group overrides by group id.
	Groups map[string]GroupConfigOverride
	// Bounds limit Defaults and Groups; zero means Kafka's.
	Bounds Bounds
}

func (c Config) ConfigBounds() Bounds {
	if c.Bounds == (Bounds{}) {
		return DefaultBounds()
	}
	return c.Bounds
}

// DefaultConfig is Kafka 4.4's configuration.
func DefaultConfig() Config {
	return Config{Defaults: DefaultGroupConfig()}
}

// Validate checks the defaults and every override.
func (c Config) Validate() error {
	var errs []error
	b := c.ConfigBounds()
	if b.MinSessionTimeout <= 0 || b.MinSessionTimeout > b.MaxSessionTimeout || b.MinHeartbeatInterval <= 0 || b.MinHeartbeatInterval > b.MaxHeartbeatInterval {
		errs = append(errs, fmt.Errorf("streams group bounds %+v are inconsistent", b))
	}
	if err := c.Defaults.ValidateWithin(b); err != nil {
		errs = append(errs, fmt.Errorf("streams group defaults: %w", err))
	}
	if c.MaxGroupSize < 0 {
		errs = append(errs, fmt.Errorf("group.streams.max.size %d is negative", c.MaxGroupSize))
	}
	for id, o := range c.Groups {
		if err := o.Apply(c.Defaults).ValidateWithin(b); err != nil {
			errs = append(errs, fmt.Errorf("streams group %q: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// Group returns the effective configuration of one group.
func (c Config) Group(id string) GroupConfig {
	if o, ok := c.Groups[id]; ok {
		return o.Apply(c.Defaults)
	}
	return c.Defaults
}

// groupKeyPrefix starts a per-group override: "group.<group id>.<key>".
const groupKeyPrefix = "group."

// ParseConfig builds a Config from Kafka-named keys (values as strings, the
// way YAML, environment and IncrementalAlterConfigs carry them): the keys
// above set the defaults and limits; "group.<id>.<key>" overrides one
// group's setting. A key may carry Kafka's "streams." prefix. Unknown keys
// and bad values are errors; the result is validated.
func ParseConfig(kv map[string]string) (Config, error) {
	cfg := DefaultConfig()
	var errs []error
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.TrimSpace(kv[k])
		key := strings.TrimPrefix(k, "streams.")
		if rest, ok := strings.CutPrefix(key, groupKeyPrefix); ok {
			id, setting, err := splitGroupKey(rest)
			if err == nil {
				o := cfg.Groups[id]
				err = o.Set(setting, v)
				if cfg.Groups == nil {
					cfg.Groups = map[string]GroupConfigOverride{}
				}
				cfg.Groups[id] = o
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", k, err))
			}
			continue
		}
		if err := cfg.set(key, v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// splitGroupKey splits "<id>.<key>" where the key is one of the per-group
// keys (group ids may contain dots). The longest matching key wins: one key
// ends another (reconciliation.heartbeat.interval.ms, heartbeat.interval.ms).
func splitGroupKey(s string) (id, key string, err error) {
	for _, d := range GroupConfigDefs {
		if k := d.Key; strings.HasSuffix(s, "."+k) && len(s) > len(k)+1 && len(k) > len(key) {
			id, key = s[:len(s)-len(k)-1], k
		}
	}
	if key == "" {
		return "", "", errors.New("not <group id>.<per-group setting>")
	}
	return id, key, nil
}

func (c *Config) set(key, v string) error {
	switch key {
	case KeyMaxSize:
		return parseInt(v, &c.MaxGroupSize)
	case KeyMinSessionTimeout:
		return c.parseBound(v, &c.Bounds.MinSessionTimeout)
	case KeyMaxSessionTimeout:
		return c.parseBound(v, &c.Bounds.MaxSessionTimeout)
	case KeyMinHeartbeatInterval:
		return c.parseBound(v, &c.Bounds.MinHeartbeatInterval)
	case KeyMaxHeartbeatInterval:
		return c.parseBound(v, &c.Bounds.MaxHeartbeatInterval)
	}
	if def, ok := groupConfigDefByKey(key); ok {
		return def.field.parse(&c.Defaults, v)
	}
	return errors.New("unknown streams group setting")
}

// parseBound reads a bound of c in milliseconds. Setting a bound first
// fills the others with Kafka's defaults, so a partial bounds configuration
// stays consistent.
func (c *Config) parseBound(v string, dst *time.Duration) error {
	if c.Bounds == (Bounds{}) {
		c.Bounds = DefaultBounds()
	}
	n, err := readMs(v)
	if err == nil {
		*dst = n
	}
	return err
}

func parseInt(v string, dst *int) error {
	n, err := strconv.Atoi(v)
	*dst = n
	return err
}
