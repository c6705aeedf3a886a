package config

import (
	"fmt"
	"strings"
	"time"
)

// streamsKeyPrefix starts the keys of the streams: section, which are
// Kafka's own (group.streams.* without the prefix) and documented with
// Kafka's defaults and bounds in one README row of their own.
const streamsKeyPrefix = "streams."

// Reference renders the README's configuration table of section (see
// keyDocs): one row per key, with its flag, environment variable and
// default. README.md holds each table between the markers
// `<!-- config:SECTION -->` and `<!-- /config:SECTION -->`, and a test
// checks it is what this renders (go test ./config -run TestREADME -update
// rewrites them).
func Reference(section string) string {
	flags := map[string]string{}
	for _, f := range flagKeys {
		flags[f.key] = "`--" + f.flag + "`"
	}
	def := flatten(Default())
	var b strings.Builder
	b.WriteString("| YAML key | flag / environment | default | meaning |\n|---|---|---|---|\n")
	for _, d := range keyDocs {
		if d.section != section {
			continue
		}
		key := d.key
		how := "`" + envName(key) + "`"
		if f := flags[key]; f != "" {
			how = f + ", " + how
		}
		shown := d.shownDefault
		if shown == "" {
			shown = "`" + shortDuration(def[key]) + "`"
			if def[key] == "" {
				shown = ""
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", key, how, shown, d.meaning)
	}
	return b.String()
}

// undocumentedKeys are the known keys without a keyDoc (streams.* aside).
func undocumentedKeys() []string {
	var out []string
	for _, key := range knownKeys() {
		if _, ok := docOf(key); !ok && !strings.HasPrefix(key, streamsKeyPrefix) {
			out = append(out, key)
		}
	}
	return out
}

// referenceSections are the sections keyDocs names, in README order.
func referenceSections() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range keyDocs {
		if !seen[d.section] {
			seen[d.section] = true
			out = append(out, d.section)
		}
	}
	return out
}

// shortDuration writes a default duration as a user would: 1m, not 1m0s.
func shortDuration(v string) string {
	if _, err := time.ParseDuration(v); err != nil {
		return v
	}
	for _, zero := range []string{"0s", "0m"} {
		if len(v) > 2 && strings.HasSuffix(v, zero) && !strings.ContainsAny(v[len(v)-3:len(v)-2], "0123456789") {
			v = strings.TrimSuffix(v, zero)
		}
	}
	return v
}
