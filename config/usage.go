package config

import (
	"fmt"
	"io"
	"strings"
)

// sectionTitles name the reference's sections, as the README's headings do.
var sectionTitles = map[string]string{
	sectionProxy:     "Proxy",
	sectionSecurity:  "TLS and authorization",
	sectionStreams:   "Streams groups",
	sectionMigration: "Migration",
	sectionCapture:   "Capture",
	sectionAdmin:     "Admin listener (admin-listen)",
}

// commonKeys are the keys `streamshift run -h` shows, with a one-line
// meaning: what nearly every deployment sets. The rest is in --help-all. A
// key listed here that the build does not have is left out (keys of
// branches merged later: upstream-config).
var commonKeys = []struct{ key, brief string }{
	{"upstream", "the Kafka cluster's bootstrap brokers"},
	{"upstream-config", "Kafka client properties for the brokers (security.protocol, ssl.*, sasl.*)"},
	{"listen", "the bootstrap listener clients connect to"},
	{"advertised-host", "the host clients are told for every broker (needed when listen is 0.0.0.0)"},
	{"node-port-base", "broker N is served on base+N"},
	{"admin-listen", "/healthz, /readyz, /metrics, /ui; empty turns it off"},
	{"admin.auth-token-file", "bearer token for admin changes (/capture) and /debug/pprof/"},
	{"proxy-id", "stable and unique per instance"},
	{"coordinator.durable-log", "keep group state in a compacted Kafka topic (restarts, several instances)"},
	{"migration.policy", "disabled, upgrade, downgrade or bidirectional (Kafka's group.consumer.migration.policy)"},
	{"capture.file", "JSON-lines capture of the group traffic, for debugging"},
	{"log.level", "trace, debug, info, warn or error"},
}

// PrintUsage writes `streamshift run -h`: one screen with the keys everyone
// sets, and where the rest is.
func PrintUsage(w io.Writer, command string) {
	fmt.Fprintf(w, "usage: streamshift %s [flags]\n\n", command)
	fmt.Fprintln(w, "Each key is set by its flag, its environment variable or the --config YAML file")
	fmt.Fprintln(w, "(precedence in that order, then the default).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "  --config FILE")
	fmt.Fprintln(w, "        YAML file with any key of the reference (limits: {request-timeout: 30s})")
	types := keyTypes()
	for _, c := range commonKeys {
		if _, ok := types[c.key]; !ok {
			continue
		}
		def := defaultWords(shownDefault(c.key))
		if f := flagOf(c.key); f != "" {
			fmt.Fprintf(w, "  --%s %s  (%s; %s)\n", f, flagArg(c.key), envName(c.key), def)
		} else {
			fmt.Fprintf(w, "  %s=%s  (YAML %s; %s)\n", envName(c.key), flagArg(c.key), c.key, def)
		}
		fmt.Fprintf(w, "        %s\n", c.brief)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Every key (flag, variable, YAML key, default, meaning): streamshift %s --help-all\n", command)
	fmt.Fprintln(w, "or streamshift config reference (--markdown for tables).")
}

// PrintReference writes the whole configuration reference
// (`streamshift run --help-all`, `streamshift config reference`): every
// key once, with its flag, environment variable, default and meaning.
func PrintReference(w io.Writer) {
	fmt.Fprintln(w, "streamshift run: every configuration key")
	fmt.Fprintln(w)
	for _, line := range wrap(referenceIntro, 100) {
		fmt.Fprintln(w, line)
	}
	for _, section := range referenceSections() {
		fmt.Fprintf(w, "\n%s\n", sectionTitle(section))
		for _, d := range keyDocs {
			if d.section == section {
				printKey(w, d.key, shownDefault(d.key), d.meaning)
			}
		}
		if section == sectionStreams {
			for _, key := range knownKeys() {
				if strings.HasPrefix(key, streamsKeyPrefix) {
					meaning, def := streamsKeyDoc(key)
					printKey(w, key, def, meaning)
				}
			}
		}
	}
}

const referenceIntro = "A key is set by its flag, by its environment variable (" + EnvPrefix + " and the key upper-cased, " +
	". and - as _), or in the --config YAML file, where a dotted key is nested (limits: {max-frame-bytes: …}); " +
	"precedence: flags, environment, file, default. Durations take a unit (30s, 500ms, 5m). " +
	"Kafka's own keys keep Kafka's names and units (streams.session.timeout.ms is in milliseconds)."

func printKey(w io.Writer, key, def, meaning string) {
	how := envName(key)
	if f := flagOf(key); f != "" {
		how = "--" + f + ", " + how
	}
	fmt.Fprintf(w, "  %s  (%s; %s)\n", key, how, defaultWords(def))
	for _, line := range wrap(meaning, 92) {
		fmt.Fprintf(w, "        %s\n", line)
	}
}

func sectionTitle(section string) string {
	if t := sectionTitles[section]; t != "" {
		return t
	}
	return section // a section added without a title here
}

// MarkdownReference is the reference as markdown: a table per section, the
// streams.* keys in their own.
func MarkdownReference(w io.Writer) {
	fmt.Fprintf(w, "# streamshift configuration\n\n%s\n", referenceIntro)
	for _, section := range referenceSections() {
		fmt.Fprintf(w, "\n## %s\n\n%s", sectionTitle(section), Reference(section))
		if section == sectionStreams {
			fmt.Fprint(w, "\n| YAML key | environment | default | meaning |\n|---|---|---|---|\n")
			for _, key := range knownKeys() {
				if strings.HasPrefix(key, streamsKeyPrefix) {
					meaning, def := streamsKeyDoc(key)
					fmt.Fprintf(w, "| `%s` | `%s` | %s | %s |\n", key, envName(key), def, meaning)
				}
			}
		}
	}
}

// defaultWords is "default X", or "required" for a key without one.
func defaultWords(shown string) string {
	if shown == "(required)" {
		return "required"
	}
	return "default " + shown
}

// wrap breaks text into lines of at most width runes, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len([]rune(line))+1+len([]rune(word)) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
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
	case key == "proxy-id":
		return "ID"
	case strings.HasSuffix(key, "-file") || strings.HasSuffix(key, "-config") || strings.HasSuffix(key, ".file"):
		return "FILE"
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
