package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/streamshift/streamshift/capture"
)

const timelineUsage = `usage: streamshift timeline FILE... [--group G] [--html OUT] [--names FILE] [--json]

Reads capture files (capture.file, rotated .gz files, flight-recorder dumps)
and prints one group's history: per member its protocol, epochs and
generations and the tasks it owned over time; per task its owners and any
time with no owner or two owners (flagged), and each stall: a time it ran
nowhere because its owner was gone (connection closed, silent, left); one
row per rolling step (the instance that went, the one that came, each
task's time with no running owner); errors per client; how long each
migration step took. --html also writes a self-contained page with
swimlanes. Members are shown as host/processUUID[:8] thread N (a Kafka
Streams consumer's client id <application.id>-<process UUID>-StreamThread-N-
consumer, its endpoint's host or its connection's address); --names FILE
maps process ids (whole or first 8 characters), hosts or client ids to names
of your own, one key=name a line (or YAML key: name; # comments).
--json prints the same as one JSON document instead of the text (docs/observe.md:
version 2: members with labels, per task its intervals with owners and
state running, stalled, moving, twice or no-owner, the stalls, the rolling
steps, the migration steps with their durations). Garbled or truncated lines are reported with their line numbers
and skipped.

Exit status: 0 done, 1 a task had two owners, 2 usage or unreadable input.
`

func runTimeline(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("streamshift timeline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, timelineUsage) }
	group := fs.String("group", "", "group id (default: the migrated group, else the busiest)")
	htmlOut := fs.String("html", "", "write an HTML page here")
	asJSON := fs.Bool("json", false, "print the timeline as JSON instead of text")
	namesFile := fs.String("names", "", "file of key=name lines: process id, host or client id → a name of yours")
	// Files and flags in any order: FILE... --group G works too.
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) == 0 {
		fmt.Fprint(stderr, timelineUsage)
		return 2
	}
	var lines []capture.Line
	var problems []string
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(stderr, "streamshift timeline: %v\n", err)
			return 2
		}
		l, p := capture.ReadLines(name, f)
		f.Close()
		lines, problems = append(lines, l...), append(problems, p...)
	}
	var names capture.Names
	if *namesFile != "" {
		f, err := os.Open(*namesFile)
		if err != nil {
			fmt.Fprintf(stderr, "streamshift timeline: %v\n", err)
			return 2
		}
		names, err = capture.ReadNames(*namesFile, f)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "streamshift timeline: --names: %v\n", err)
			return 2
		}
	}
	t := capture.BuildTimeline(lines, *group)
	t.SetNames(names)
	t.Problems = problems
	for _, p := range problems {
		fmt.Fprintf(stderr, "streamshift timeline: %s\n", p)
	}
	if *asJSON {
		if err := t.WriteJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "streamshift timeline: json: %v\n", err)
			return 2
		}
	} else {
		t.WriteText(stdout)
	}
	if *htmlOut != "" {
		f, err := os.Create(*htmlOut)
		if err != nil {
			fmt.Fprintf(stderr, "streamshift timeline: %v\n", err)
			return 2
		}
		if err := t.WriteHTML(f); err != nil {
			f.Close()
			fmt.Fprintf(stderr, "streamshift timeline: html: %v\n", err)
			return 2
		}
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "streamshift timeline: %v\n", err)
			return 2
		}
	}
	if t.Overlaps() > 0 {
		return 1
	}
	return 0
}
