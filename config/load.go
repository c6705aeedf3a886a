package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	"github.com/rs/zerolog"
)

// EnvPrefix starts every environment variable streamshift reads.
const EnvPrefix = "STREAMSHIFT_"

// flagKeys maps each command-line flag to its configuration key; its usage
// is the key's meaning (keyDocs).
var flagKeys = []struct{ flag, key string }{
	{"upstream", "upstream"},
	{"listen", "listen"},
	{"advertised-host", "advertised-host"},
	{"node-port-base", "node-port-base"},
	{"node-id-min", "node-id-min"},
	{"node-id-max", "node-id-max"},
	{"admin-listen", "admin-listen"},
	{"upstream-dial-timeout", "upstream-dial-timeout"},
	{"metadata-refresh-interval", "metadata-refresh-interval"},
	{"shutdown-timeout", "shutdown-timeout"},
	{"event-loops", "event-loops"},
	{"max-frame-bytes", "limits.max-frame-bytes"},
	{"max-intercepted-bytes", "limits.max-intercepted-bytes"},
	{"max-inflight-requests", "limits.max-inflight-requests"},
	{"buffer-high-water-bytes", "limits.buffer-high-water-bytes"},
	{"max-connections", "limits.max-connections"},
	{"max-connections-per-ip", "limits.max-connections-per-ip"},
	{"request-timeout", "limits.request-timeout"},
	{"connections-max-idle", "limits.connections-max-idle"},
	{"max-buffered-bytes", "limits.max-buffered-bytes"},
	{"max-answer-bytes", "limits.max-answer-bytes"},
	{"log-level", "log.level"},
	{"log-format", "log.format"},
	{"proxy-id", "proxy-id"},
}

// Setting describes one configuration key, for documentation.
type Setting struct {
	Key, Env, Flag, Default, Usage string
}

// Settings lists every key with its environment variable, flag and default.
func Settings() []Setting {
	def := flatten(Default())
	flags := map[string]int{}
	for i, f := range flagKeys {
		flags[f.key] = i
	}
	var out []Setting
	for _, key := range knownKeys() {
		s := Setting{Key: key, Env: envName(key), Default: def[key]}
		if i, ok := flags[key]; ok {
			s.Flag = "--" + flagKeys[i].flag
			s.Usage = meaningOf(key)
		}
		out = append(out, s)
	}
	return out
}

// Load builds the configuration from args (after the command name) and the
// environment (os.Environ form). It returns flag.ErrHelp when -h was asked.
// warnings are worth logging but not fatal (unknown STREAMSHIFT_ variables).
func Load(args, environ []string, usageOut io.Writer) (cfg *Config, warnings []string, err error) {
	fs := flag.NewFlagSet("streamshift run", flag.ContinueOnError)
	fs.SetOutput(usageOut)
	configPath := fs.String("config", "", "YAML configuration file")
	def := flatten(Default())
	for _, f := range flagKeys {
		fs.String(f.flag, def[f.key], meaningOf(f.key))
	}
	fs.Usage = func() { PrintUsage(usageOut, "run") }
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if fs.NArg() > 0 {
		return nil, nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}

	k := koanf.New(".")
	if *configPath != "" {
		if err := k.Load(file.Provider(*configPath), yaml.Parser()); err != nil {
			return nil, nil, fmt.Errorf("config file %s: %w", *configPath, err)
		}
	}
	fromEnv, fromFlags := map[string]string{}, map[string]string{} // key → value, to name a bad one
	byEnv := map[string]string{}
	for _, key := range knownKeys() {
		byEnv[envName(key)] = key
	}
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		key, ok := byEnv[name]
		if !ok {
			warnings = append(warnings, fmt.Sprintf("ignoring unknown environment variable %s", name))
			continue
		}
		if err := k.Set(key, val); err != nil {
			return nil, nil, fmt.Errorf("environment %s: %w", name, err)
		}
		fromEnv[key] = val
	}
	var flagErr error
	fs.Visit(func(f *flag.Flag) {
		for _, fk := range flagKeys {
			if fk.flag == f.Name {
				if err := k.Set(fk.key, f.Value.String()); err != nil && flagErr == nil {
					flagErr = fmt.Errorf("flag --%s: %w", f.Name, err)
				}
				fromFlags[fk.key] = f.Value.String()
			}
		}
	})
	if flagErr != nil {
		return nil, nil, flagErr
	}

	known := map[string]bool{}
	for _, key := range knownKeys() {
		known[key] = true
	}
	var unknown []string
	for _, key := range k.Keys() {
		if !known[key] {
			unknown = append(unknown, key)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, nil, fmt.Errorf("unknown configuration key(s): %s", strings.Join(unknown, ", "))
	}

	c := Default()
	if err := k.UnmarshalWithConf("", &c, koanf.UnmarshalConf{DecoderConfig: decoderConfig(&c)}); err != nil {
		return nil, nil, sourceOfError(err, fromFlags, fromEnv, *configPath)
	}
	if err := k.UnmarshalWithConf("streams", &c.Streams, koanf.UnmarshalConf{FlatPaths: true, DecoderConfig: decoderConfig(&c.Streams)}); err != nil {
		return nil, nil, sourceOfError(fmt.Errorf("streams: %w", err), fromFlags, fromEnv, *configPath)
	}
	if err := c.Validate(); err != nil {
		return nil, nil, withSources(err, fromFlags, fromEnv)
	}
	return &c, warnings, nil
}

func decoderConfig(out any) *mapstructure.DecoderConfig {
	return &mapstructure.DecoderConfig{
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToSliceHookFunc(","),
		),
		WeaklyTypedInput: true,
		TagName:          "koanf",
		Result:           out,
	}
}

// Validate checks the whole configuration and reports every problem at once.
func (c *Config) Validate() error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if len(c.Upstream) == 0 {
		add("upstream: required (--upstream host:port[,host:port...])")
	}
	for i, u := range c.Upstream {
		c.Upstream[i] = strings.TrimSpace(u)
		if err := checkHostPort(c.Upstream[i], false); err != nil {
			add("upstream %q: %v", u, err)
		}
	}
	listenHost, listenPort := "", 0
	if err := checkHostPort(c.Listen, true); err != nil {
		add("listen %q: %v", c.Listen, err)
	} else {
		h, p, _ := net.SplitHostPort(c.Listen)
		listenHost = h
		listenPort, _ = strconv.Atoi(p)
	}
	if c.AdvertisedHost == "" && listenPort != 0 {
		if ip := net.ParseIP(listenHost); listenHost == "" || (ip != nil && ip.IsUnspecified()) {
			add("advertised-host: required when listen %q binds every address", c.Listen)
		}
	}
	if c.NodeIDMin < 0 || c.NodeIDMax < c.NodeIDMin {
		add("node-id-min %d / node-id-max %d: need 0 <= min <= max", c.NodeIDMin, c.NodeIDMax)
	} else if listenPort != 0 {
		base := c.NodePortBase
		if base == 0 {
			base = listenPort + 1
		}
		lo, hi := base+int(c.NodeIDMin), base+int(c.NodeIDMax)
		if lo < 1 || hi > 65535 {
			add("node-port-base %d: node ports %d..%d fall outside 1..65535", base, lo, hi)
		} else if listenPort >= lo && listenPort <= hi {
			add("node-port-base %d: node ports %d..%d include the listen port %d", base, lo, hi, listenPort)
		}
	}
	if c.AdminListen != "" {
		if err := checkHostPort(c.AdminListen, true); err != nil {
			add("admin-listen %q: %v", c.AdminListen, err)
		}
	}
	for name, d := range map[string]time.Duration{
		"upstream-dial-timeout":     c.UpstreamDialTimeout,
		"metadata-refresh-interval": c.MetadataRefreshInterval,
		"shutdown-timeout":          c.ShutdownTimeout,
	} {
		if d <= 0 {
			add("%s: must be positive, got %v", name, d)
		}
	}
	if c.EventLoops < 0 {
		add("event-loops: must be >= 0, got %d", c.EventLoops)
	}
	if c.Limits.MaxFrameBytes < 1024 || c.Limits.MaxFrameBytes > 1<<31-1 {
		add("limits.max-frame-bytes: must be 1024..2147483647, got %d", c.Limits.MaxFrameBytes)
	}
	if c.Limits.MaxInterceptedBytes < 1024 {
		add("limits.max-intercepted-bytes: must be >= 1024, got %d", c.Limits.MaxInterceptedBytes)
	}
	if c.Limits.MaxInflightRequests < 1 {
		add("limits.max-inflight-requests: must be >= 1, got %d", c.Limits.MaxInflightRequests)
	}
	if c.Limits.BufferHighWaterBytes < 1024 {
		add("limits.buffer-high-water-bytes: must be >= 1024, got %d", c.Limits.BufferHighWaterBytes)
	}
	if c.Limits.MaxConnections < 0 {
		add("limits.max-connections: must be >= 0 (0: derived from the descriptor limit), got %d", c.Limits.MaxConnections)
	}
	if c.Limits.MaxConnectionsPerIP < 0 {
		add("limits.max-connections-per-ip: must be >= 0 (0: no limit), got %d", c.Limits.MaxConnectionsPerIP)
	}
	if c.Limits.RequestTimeout <= 0 {
		add("limits.request-timeout: must be positive, got %v", c.Limits.RequestTimeout)
	}
	if c.Limits.ConnectionsMaxIdle <= 0 {
		add("limits.connections-max-idle: must be positive, got %v", c.Limits.ConnectionsMaxIdle)
	}
	if c.Limits.MaxBufferedBytes < 1<<20 {
		add("limits.max-buffered-bytes: must be >= 1048576, got %d", c.Limits.MaxBufferedBytes)
	}
	// Above max-buffered-bytes it is lowered to it where it is used (a
	// budget set below the default bound needs no second setting).
	if c.Limits.MaxAnswerBytes < 1<<20 {
		add("limits.max-answer-bytes: must be >= 1048576, got %d", c.Limits.MaxAnswerBytes)
	}
	if _, err := zerolog.ParseLevel(c.Log.Level); err != nil || c.Log.Level == "" {
		add("log.level %q: want trace, debug, info, warn or error", c.Log.Level)
	}
	if c.Log.Format != "json" && c.Log.Format != "console" {
		add("log.format %q: want json or console", c.Log.Format)
	}
	for _, e := range c.Capture.validate() {
		add("%s", e)
	}
	for _, e := range c.Migration.validate() {
		add("%s", e)
	}
	for _, e := range c.Streams.validate() {
		add("%s", e)
	}
	for _, e := range c.validateCoordinator() {
		add("%s", e)
	}
	for _, e := range c.validateCluster() {
		add("%s", e)
	}
	for _, e := range c.Authorization.validate() {
		add("%s", e)
	}
	for _, e := range c.validateSecurity() {
		add("%s", e)
	}
	if len(errs) > 0 {
		return errors.New("invalid configuration:\n  " + strings.Join(errs, "\n  "))
	}
	return nil
}

func checkHostPort(s string, allowEmptyHost bool) error {
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		return err
	}
	if h == "" && !allowEmptyHost {
		return errors.New("missing host")
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not 1..65535", p)
	}
	return nil
}

func envName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// knownKeys lists every leaf key of Config, streams.* included, sorted.
func knownKeys() []string {
	keys := leafKeys(reflect.TypeOf(Config{}), "")
	for _, k := range leafKeys(reflect.TypeOf(Streams{}), "") {
		keys = append(keys, "streams."+k)
	}
	sort.Strings(keys)
	return keys
}

func leafKeys(t reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("koanf")
		if tag == "" || tag == "-" {
			continue
		}
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Duration(0)) {
			out = append(out, leafKeys(f.Type, prefix+tag+".")...)
			continue
		}
		out = append(out, prefix+tag)
	}
	return out
}

// flatten renders a Config's leaf values as strings keyed like knownKeys.
func flatten(c Config) map[string]string {
	out := map[string]string{}
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("koanf")
			if tag == "" || tag == "-" {
				continue
			}
			fv := v.Field(i)
			if f.Type.Kind() == reflect.Struct {
				walk(fv, prefix+tag+".")
				continue
			}
			switch x := fv.Interface().(type) {
			case []string:
				out[prefix+tag] = strings.Join(x, ",")
			default:
				out[prefix+tag] = fmt.Sprint(x)
			}
		}
	}
	walk(reflect.ValueOf(c), "")
	walk(reflect.ValueOf(c.Streams), "streams.")
	return out
}

// Environ is os.Environ, for callers that want the default.
func Environ() []string { return os.Environ() }
