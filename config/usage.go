package config

import (
	"fmt"
	"io"
	"strings"

	"github.com/knadh/koanf/v2"
)

// sectionTitles name the reference's sections in `streamshift run -h`, as
// the README's headings do.
var sectionTitles = map[string]string{
	sectionProxy:     "Proxy",
	sectionSecurity:  "TLS and authorization",
	sectionStreams:   "Streams groups",
	sectionMigration: "Migration",
	sectionCapture:   "Capture",
}

// PrintUsage writes `streamshift run -h`: the flags, then the whole
// configuration reference (every key with its environment variable,
// default and meaning: the README's tables, from the same keyDocs), with
// the defaults a user sees (listen port + 1, not 0).
func PrintUsage(w io.Writer, command string) {
	fmt.Fprintf(w, "usage: streamshift %s [flags]\n\n", command)
	fmt.Fprintf(w, "Precedence: flags > %s* environment > --config YAML file > defaults.\n", EnvPrefix)
	fmt.Fprintf(w, "A key's variable is %s + the key upper-cased, . and - as _ (limits.max-frame-bytes\n", EnvPrefix)
	fmt.Fprintf(w, "is %s); in YAML, a dotted key is nested (limits: {max-frame-bytes: …}).\n\n", envName("limits.max-frame-bytes"))
	fmt.Fprintln(w, "Flags:")
	fmt.Fprintln(w, "  --config FILE")
	fmt.Fprintln(w, "        YAML configuration file")
	for _, f := range flagKeys {
		fmt.Fprintf(w, "  --%s %s\n        %s (default: %s; %s)\n", f.flag, flagArg(f.key), meaningOf(f.key), shownDefault(f.key), envName(f.key))
	}
	for _, section := range referenceSections() {
		title := sectionTitles[section]
		if title == "" {
			title = section // a section added without a title here
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, d := range keyDocs {
			if d.section != section {
				continue
			}
			fmt.Fprintf(w, "  %s  (%s, default: %s)\n        %s\n", d.key, envName(d.key), shownDefault(d.key), d.meaning)
		}
	}
	fmt.Fprintf(w, "\nstreams.<key>: Kafka's group.streams.* broker settings without the prefix, with Kafka's\ndefaults and bounds (%sSTREAMS_SESSION_TIMEOUT_MS, …): see the README, Configuration.\n", EnvPrefix)
}

// flagArg names a flag's value by the type of its key's default.
func flagArg(key string) string {
	def := flatten(Default())[key]
	switch {
	case key == "upstream":
		return "HOST:PORT[,…]"
	case strings.Contains(key, "listen"):
		return "HOST:PORT"
	case key == "advertised-host":
		return "HOST"
	case def == "true" || def == "false":
		return "BOOL"
	case strings.HasSuffix(def, "s") && shortDuration(def) != def || strings.HasSuffix(key, "-timeout") || strings.HasSuffix(key, "-interval"):
		return "DURATION"
	}
	if _, err := fmt.Sscan(def, new(int64)); err == nil && def != "" {
		return "N"
	}
	return "STRING"
}

// shownDefault is a key's default as the reference shows it: its keyDoc's
// words where the zero value stands for something computed, else the value.
func shownDefault(key string) string {
	if d, ok := docOf(key); ok && d.shownDefault != "" {
		return strings.ReplaceAll(d.shownDefault, "`", "")
	}
	v := shortDuration(flatten(Default())[key])
	if v == "" {
		return "none"
	}
	return v
}

// sourceOfError names the flag or environment variable whose value the
// configuration could not take (the error unmarshal gives names the key
// only): each flag and STREAMSHIFT_ variable set is tried alone on the
// defaults. Without a culprit there, the error is the --config file's.
func sourceOfError(err error, flags, env map[string]string, configPath string) error {
	try := func(key, val string) error {
		k := koanf.New(".")
		if kerr := k.Set(key, val); kerr != nil {
			return kerr
		}
		c := Default()
		if strings.HasPrefix(key, streamsKeyPrefix) {
			return k.UnmarshalWithConf("streams", &c.Streams, koanf.UnmarshalConf{FlatPaths: true, DecoderConfig: decoderConfig(&c.Streams)})
		}
		return k.UnmarshalWithConf("", &c, koanf.UnmarshalConf{DecoderConfig: decoderConfig(&c)})
	}
	for _, f := range flagKeys {
		if val, ok := flags[f.key]; ok {
			if e := try(f.key, val); e != nil {
				return fmt.Errorf("flag --%s %q: %w", f.flag, val, e)
			}
		}
	}
	for _, key := range knownKeys() {
		val, ok := env[key]
		if _, byFlag := flags[key]; !ok || byFlag {
			continue
		}
		if e := try(key, val); e != nil {
			return fmt.Errorf("environment variable %s=%q: %w", envName(key), val, e)
		}
	}
	if configPath != "" {
		return fmt.Errorf("config file %s: %w", configPath, err)
	}
	return fmt.Errorf("configuration: %w", err)
}

// withSources adds to each line of a validation error that names a key set
// by a flag or a STREAMSHIFT_ variable where that value came from: the user
// set the variable, not the key.
func withSources(err error, flags, env map[string]string) error {
	lines := strings.Split(err.Error(), "\n")
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		for _, key := range knownKeys() {
			named := key
			if rest, ok := strings.CutPrefix(key, streamsKeyPrefix); ok {
				named = "streams: " + rest
			}
			if !strings.HasPrefix(trimmed, named+":") && !strings.HasPrefix(trimmed, named+" ") {
				continue
			}
			if _, ok := flags[key]; ok {
				lines[i] += " (from flag --" + flagOf(key) + ")"
			} else if _, ok := env[key]; ok {
				lines[i] += " (from environment variable " + envName(key) + ")"
			}
			break
		}
	}
	return fmt.Errorf("%s", strings.Join(lines, "\n"))
}

// flagOf is key's flag name, empty if it has none.
func flagOf(key string) string {
	for _, f := range flagKeys {
		if f.key == key {
			return f.flag
		}
	}
	return ""
}
