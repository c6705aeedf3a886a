package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
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
// is the key's meaning (keyDocs). Every key has a flag: the short names
// below, and for every other key the key itself with "." as "-"
// (coordinator.durable-log: --coordinator-durable-log,
// streams.session.timeout.ms: --streams-session-timeout-ms), as its
// environment variable is named.
var flagKeys = withDerivedFlags(namedFlags)

// namedFlags are the flags whose names are shorter than their keys.
var namedFlags = []struct{ flag, key string }{
	{"upstream", "upstream"},
	{"upstream-config", "upstream-config"},
	{"listen", "listen"},
	{"advertised-host", "advertised-host"},
	{"node-port-base", "node-port-base"},
	{"node-id-min", "node-id-min"},
	{"node-id-max", "node-id-max"},
	{"admin-listen", "admin-listen"},
	{"admin-auth-token-file", "admin.auth-token-file"},
	{"admin-pprof", "admin.pprof"},
	{"admin-tls", "admin.tls"},
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
	{"cluster-listen", "cluster.listen"},
	{"tls-cert-file", "tls.cert-file"},
	{"tls-key-file", "tls.key-file"},
	{"tls-keystore-location", "tls.keystore-location"},
	{"tls-keystore-type", "tls.keystore-type"},
	{"tls-keystore-password", "tls.keystore-password"},
	{"tls-key-password", "tls.key-password"},
	{"tls-client-ca-file", "tls.client-ca-file"},
	{"tls-truststore-location", "tls.truststore-location"},
	{"tls-truststore-type", "tls.truststore-type"},
	{"tls-truststore-password", "tls.truststore-password"},
	{"tls-client-auth", "tls.client-auth"},
	{"tls-handshake-timeout", "tls.handshake-timeout"},
	{"tls-max-handshakes", "tls.max-handshakes"},
	{"upstream-tls-enabled", "upstream-tls.enabled"},
	{"upstream-tls-ca-file", "upstream-tls.ca-file"},
	{"upstream-tls-cert-file", "upstream-tls.cert-file"},
	{"upstream-tls-key-file", "upstream-tls.key-file"},
	{"upstream-tls-server-name", "upstream-tls.server-name"},
	{"upstream-tls-insecure-skip-verify", "upstream-tls.insecure-skip-verify"},
}

// withDerivedFlags adds a flag for every key named has none for.
func withDerivedFlags(named []struct{ flag, key string }) []struct{ flag, key string } {
	out := append([]struct{ flag, key string }(nil), named...)
	has := map[string]bool{}
	for _, f := range named {
		has[f.key] = true
	}
	for _, key := range knownKeys() {
		if !has[key] {
			out = append(out, struct{ flag, key string }{strings.ReplaceAll(key, ".", "-"), key})
		}
	}
	return out
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
// environment (os.Environ form). -h writes the short usage to usageOut and
// --help-all the whole reference; both return flag.ErrHelp. A command line
// that does not parse is a *UsageError; a configuration that does not load
// or validate is Problems, every problem at once, each naming its key and
// where its value came from. warnings are worth logging but not fatal
// (unknown STREAMSHIFT_ variables).
func Load(args, environ []string, usageOut io.Writer) (cfg *Config, warnings []string, err error) {
	cl := newCommandLine()
	if err := cl.parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			PrintUsage(usageOut, "run")
		}
		return nil, nil, err
	}
	if *cl.helpAll {
		PrintReference(usageOut)
		return nil, nil, flag.ErrHelp
	}

	k := koanf.New(".")
	src := sources{}
	var problems Problems
	if path := *cl.configPath; path != "" {
		if err := k.Load(file.Provider(path), yaml.Parser()); err != nil {
			return nil, nil, Problems{configFileProblem(path, err)}
		}
		for _, key := range k.Keys() {
			src[key] = "config file " + path
		}
	}
	types := keyTypes()
	byEnv := map[string]string{}
	var envNames []string
	for key := range types {
		byEnv[envName(key)] = key
		envNames = append(envNames, envName(key))
	}
	sort.Strings(envNames)
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		key, ok := byEnv[name]
		if !ok {
			w := fmt.Sprintf("ignoring unknown environment variable %s", name)
			if s := closest(name, envNames); s != "" {
				w += fmt.Sprintf(" (did you mean %s?)", s)
			}
			warnings = append(warnings, w)
			continue
		}
		_ = k.Set(key, val) // a string at a known leaf: Set has nothing to refuse
		src[key] = "environment " + name
	}
	cl.fs.Visit(func(f *flag.Flag) {
		if key := keyOfFlag(f.Name); key != "" {
			_ = k.Set(key, f.Value.String())
			src[key] = "--" + f.Name
		}
	})

	knownList := knownKeys()
	for _, key := range k.Keys() {
		t, known := types[key]
		if !known {
			msg := key + ": unknown key"
			if s := closest(key, knownList); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			problems = append(problems, Problem{Key: key, Message: msg, Source: src[key]})
			k.Delete(key)
			continue
		}
		v := k.Get(key)
		reason := valueProblem(t, v)
		if reason == "" && strings.HasPrefix(key, streamsKeyPrefix) {
			reason = streamsValueProblem(key, v)
		}
		if reason != "" {
			problems = append(problems, Problem{Key: key, Message: fmt.Sprintf("%s %q: %s", key, shownValue(v), reason), Source: src[key]})
			// Validated below with its default, so that the other keys'
			// problems are listed too; none is taken with a problem.
			k.Delete(key)
		}
	}

	c := Default()
	if err := k.UnmarshalWithConf("", &c, koanf.UnmarshalConf{DecoderConfig: decoderConfig(&c)}); err != nil {
		// valueProblem let every value through: a case it misses.
		return nil, nil, Problems{{Message: "the configuration does not decode: " + err.Error()}}
	}
	if err := k.UnmarshalWithConf("streams", &c.Streams, koanf.UnmarshalConf{FlatPaths: true, DecoderConfig: decoderConfig(&c.Streams)}); err != nil {
		return nil, nil, Problems{{Message: "the streams section does not decode: " + err.Error()}}
	}
	if err := c.Validate(); err != nil {
		var ps Problems
		if !errors.As(err, &ps) {
			return nil, nil, err
		}
		for _, p := range src.attribute(ps) {
			if !problems.has(p.Key) { // a bad value's default is not the user's problem
				problems = append(problems, p)
			}
		}
	}
	if len(problems) > 0 {
		return nil, nil, problems
	}
	return &c, append(warnings, c.ConfigWarnings()...), nil
}

// configFileProblem says why the --config file did not load: it cannot be
// read, or it is not YAML (the parser's line number kept: it is the user's
// file).
func configFileProblem(path string, err error) Problem {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return Problem{Key: "config", Message: fmt.Sprintf("config %q: cannot be read: %v", path, pe.Err), Source: "--config"}
	}
	return Problem{Key: "config", Message: fmt.Sprintf("config %q: not YAML: %v", path, err), Source: "--config"}
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

// Validate checks the whole configuration and reports every problem at once,
// as Problems (one per line, each starting with its key).
func (c *Config) Validate() error {
	errs := c.applyUpstreamConfig()
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if len(c.Upstream) == 0 && c.UpstreamConfig == "" {
		add("upstream: required (--upstream host:port[,host:port...], or --upstream-config with bootstrap.servers)")
	} else if len(c.Upstream) == 0 {
		add("upstream: required: upstream-config %s has no bootstrap.servers and upstream is not set", c.UpstreamConfig)
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
	// The sections that validate themselves, in the order their
	// problems are listed.
	for _, section := range [][]string{
		c.Capture.validate(), c.Migration.validate(), c.Streams.validate(), c.validateCoordinator(),
		c.validateCluster(), c.Authorization.validate(), c.validateSecurity(), c.validateAdmin(),
	} {
		for _, e := range section {
			add("%s", e)
		}
	}
	if len(errs) > 0 {
		return problemsOf(errs)
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
