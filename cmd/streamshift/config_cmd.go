package main

import (
	"fmt"
	"io"

	"github.com/streamshift/streamshift/config"
)

const configUsage = `usage: streamshift config reference [--markdown]

Prints every configuration key of streamshift run once: its flag, environment
variable, YAML key, default and meaning (the same as streamshift run --help-all);
--markdown prints it as tables.
`

// configCmd is `streamshift config`: the configuration reference, for
// reading or for docs (--markdown).
func configCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, configUsage)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, configUsage)
		return 0
	case "reference":
	default:
		fmt.Fprintf(stderr, "streamshift config: unknown subcommand %q\n\n%s", args[0], configUsage)
		return 2
	}
	markdown := false
	for _, a := range args[1:] {
		switch a {
		case "--markdown", "-markdown":
			markdown = true
		case "-h", "--help":
			fmt.Fprint(stdout, configUsage)
			return 0
		default:
			fmt.Fprintf(stderr, "streamshift config reference: unknown flag %s (the one flag is --markdown)\n\n%s", a, configUsage)
			return 2
		}
	}
	if markdown {
		config.MarkdownReference(stdout)
	} else {
		config.PrintReference(stdout)
	}
	return 0
}
