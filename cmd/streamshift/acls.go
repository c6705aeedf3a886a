package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/upstream"
)

const aclsUsage = `usage: streamshift acls --principal User:NAME [--group APPLICATION_ID ...] [--source-topic TOPIC ...]
       [--bootstrap-server HOST:PORT] [--command-config FILE] [--format commands|markdown] [run's flags and --config]

Prints the kafka-acls commands granting streamshift's own principal (control-plane.sasl.*)
exactly what it needs for the configuration run would load from the same flags, environment
and --config (coordinator.durable-log, coordinator.log-topic, coordinator.cluster-id), one
per ACL, grouped by feature; --format markdown prints them as a table.

  --principal         the control plane's principal, as Kafka names it (User:streamshift)
  --group             the application.id of a Kafka Streams app streamshift serves (repeat it; default a placeholder)
  --source-topic      a source topic of those apps (repeat it; default a placeholder)
  --bootstrap-server  in the commands (default: the configured upstream)
  --command-config    in the commands: the admin's client properties (default: none)
`

// aclsFlags are acls' own flags; every other argument is run's.
type aclsFlags struct {
	principal, bootstrap, commandConfig, format string
	groups, sources                             []string
}

// splitACLsArgs takes acls' own flags (--name value or --name=value) out of
// args and returns the rest, for config.Load.
func splitACLsArgs(args []string) (aclsFlags, []string, error) {
	f := aclsFlags{format: "commands"}
	values := map[string]*string{"principal": &f.principal, "bootstrap-server": &f.bootstrap, "command-config": &f.commandConfig, "format": &f.format}
	lists := map[string]*[]string{"group": &f.groups, "source-topic": &f.sources}
	var rest []string
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			rest = append(rest, args[i])
			continue
		}
		if name == "h" || name == "help" {
			return f, nil, flag.ErrHelp
		}
		dst, list := values[name], lists[name]
		if dst == nil && list == nil {
			rest = append(rest, args[i])
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return f, nil, fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			val = args[i]
		}
		if dst != nil {
			*dst = val
		} else {
			*list = append(*list, val)
		}
	}
	if f.principal == "" {
		return f, nil, errors.New("--principal is required (User:NAME, the control plane's SASL user)")
	}
	if f.format != "commands" && f.format != "markdown" {
		return f, nil, fmt.Errorf("--format %q: commands or markdown", f.format)
	}
	return f, rest, nil
}

func aclsCmd(args []string) int {
	return runACLs(args, os.Environ(), os.Stdout, os.Stderr)
}

func runACLs(args, environ []string, stdout, stderr io.Writer) int {
	f, rest, err := splitACLsArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, aclsUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "streamshift acls: %v\n\n%s", err, aclsUsage)
		return 2
	}
	cfg, _, err := config.Load(rest, environ, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "streamshift acls: %v\n", err)
		return 2
	}
	if f.bootstrap == "" {
		f.bootstrap = strings.Join(cfg.Upstream, ",")
	}
	rows := upstream.RequiredACLs(aclNeeds(cfg, f.groups, f.sources))
	if f.format == "markdown" {
		writeACLTable(stdout, rows)
		return 0
	}
	writeACLCommands(stdout, f, cfg, rows)
	return 0
}

// aclNeeds are the rows' inputs for cfg and the apps given.
func aclNeeds(cfg *config.Config, groups, sources []string) upstream.ACLNeeds {
	return upstream.ACLNeeds{Groups: groups, SourceTopics: sources, DurableLog: cfg.Coordinator.DurableLog,
		LogTopic: cfg.Coordinator.LogTopic, InstanceGroup: cfg.InstanceGroup()}
}

func writeACLCommands(w io.Writer, f aclsFlags, cfg *config.Config, rows []upstream.ACL) {
	fmt.Fprintf(w, "# The ACLs of streamshift's own principal %s (coordinator.durable-log=%t", f.principal, cfg.Coordinator.DurableLog)
	if cfg.Coordinator.DurableLog {
		fmt.Fprintf(w, ", coordinator.log-topic=%s, coordinator.cluster-id=%s", cfg.Coordinator.LogTopic, cfg.Coordinator.ClusterID)
	}
	fmt.Fprintln(w, ").")
	fmt.Fprintln(w, "# Proxying alone needs none; the apps' principals need what Kafka Streams needs on Kafka, nothing more.")
	conn := "--bootstrap-server " + shellQuote(f.bootstrap)
	if f.commandConfig != "" {
		conn += " --command-config " + shellQuote(f.commandConfig)
	}
	feature := ""
	for _, r := range rows {
		if r.Feature != feature {
			feature = r.Feature
			fmt.Fprintf(w, "\n# == %s ==\n", feature)
		}
		fmt.Fprintf(w, "# %s (%s): %s\n", r, r.From, r.Why)
		var args []string
		for _, a := range r.KafkaACLsArgs(f.principal) {
			args = append(args, shellQuote(a))
		}
		fmt.Fprintf(w, "kafka-acls.sh %s %s\n", conn, strings.Join(args, " "))
	}
}

func writeACLTable(w io.Writer, rows []upstream.ACL) {
	fmt.Fprintln(w, "| Feature | Resource | Pattern | Name (from) | Operation | Why | Without it |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | `%s` (%s) | %s | %s | %s |\n", r.Feature, r.Resource, strings.ToLower(r.Pattern.String()),
			r.Name, r.From, r.Operation, r.Why, r.Breaks)
	}
}

// shellQuote quotes s for a POSIX shell when it needs it (a placeholder's
// angle brackets do).
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,:/=@+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
