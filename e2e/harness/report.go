package harness

import (
	"fmt"
	"strings"
	"time"
)

// Markdown renders the report as a table (the format used in BENCHMARKS.md).
func (rep *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (broker %s, group.protocol=%s, %s): %d input records, %d output updates, %s\n\n",
		rep.Scenario, rep.Broker, rep.Protocol, rep.Guarantee, rep.Produced, rep.Updates, rep.Duration.Round(time.Second))
	b.WriteString("| step | instances | all tasks running | balanced | longest output gap | longest gap on one partition | tasks closed dirty |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, s := range rep.Steps {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %d |\n", s.Step, s.Instances,
			sec(s.AllRunning), sec(s.Balanced), sec(s.OutputGap), sec(s.PartGap), s.DirtyClose)
	}
	if len(rep.Problems) > 0 {
		b.WriteString("\nProblems (a baseline run measures; its outcome is Kafka's):\n\n")
		for _, p := range rep.Problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	return b.String()
}

func sec(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
