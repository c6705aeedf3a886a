package capture

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// WriteText writes the timeline as a text report.
func (t *Timeline) WriteText(w io.Writer) {
	rel := func(at time.Time) string { return "+" + at.Sub(t.Start).Round(time.Millisecond).String() }
	fmt.Fprintf(w, "group %s: %s .. %s (%s)\n", t.Group, t.Start.UTC().Format(time.RFC3339Nano), t.End.UTC().Format(time.RFC3339Nano), t.End.Sub(t.Start).Round(time.Millisecond))
	for _, p := range t.Problems {
		fmt.Fprintf(w, "input: %s\n", p)
	}
	fmt.Fprintf(w, "\nmigration steps\n")
	if len(t.Phases) == 0 {
		fmt.Fprintf(w, "  none\n")
	}
	for _, p := range t.Phases {
		fmt.Fprintf(w, "  %-9s %s  %s", p.Kind, p.span(t.End, rel), p.Outcome)
		if p.Reason != "" {
			fmt.Fprintf(w, ": %s", p.Reason)
		}
		for _, s := range p.Steps {
			fmt.Fprintf(w, "; %s at %s", s.Value, rel(s.At))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nmembers\n")
	for _, ln := range t.Lanes {
		var protos []string
		for _, p := range ln.Protocols {
			protos = append(protos, p.Value+" from "+rel(p.At))
		}
		fmt.Fprintf(w, "  %s  (%s)\n", ln.Label, strings.Join(protos, ", "))
		if ln.Label != ln.ClientID {
			fmt.Fprintf(w, "    client id: %s\n", ln.ClientID)
		}
		fmt.Fprintf(w, "    member ids: %s\n", strings.Join(ln.MemberIDs, ", "))
		var eps []string
		for _, e := range ln.Epochs {
			eps = append(eps, e.Value+" at "+rel(e.At))
		}
		fmt.Fprintf(w, "    epochs: %s\n", strings.Join(eps, ", "))
		for _, o := range ln.Owned {
			fmt.Fprintf(w, "    %s owns [%s]\n", rel(o.At), strings.Join(o.Value, " "))
		}
		for _, o := range ln.Warmups {
			fmt.Fprintf(w, "    %s warms up [%s]\n", rel(o.At), strings.Join(o.Value, " "))
		}
		for _, o := range ln.Standbys {
			fmt.Fprintf(w, "    %s standbys [%s]\n", rel(o.At), strings.Join(o.Value, " "))
		}
		for _, a := range ln.Away {
			fmt.Fprintf(w, "    away %s..%s (%s): out of the group\n", rel(a.From), rel(a.To), a.Dur().Round(time.Millisecond))
		}
		for _, g := range ln.Gone {
			if g.Why != goneAway {
				fmt.Fprintf(w, "    gone %s..%s (%s): %s\n", rel(g.From), rel(g.To), g.Dur().Round(time.Millisecond), g.Why)
			}
		}
	}
	fmt.Fprintf(w, "\ntasks\n")
	overlaps, gaps, rebalances := 0, 0, 0
	for _, th := range t.Tasks {
		var owners []string
		for _, s := range th.Owners {
			owners = append(owners, fmt.Sprintf("%s %s..%s", t.LabelOf(s.Lane), rel(s.From), rel(s.To)))
		}
		changes := fmt.Sprintf("%d owner changes", th.OwnerChanges())
		if th.OwnerChanges() == 1 {
			changes = "1 owner change"
		}
		fmt.Fprintf(w, "  %s: %s: %s\n", th.Task, changes, strings.Join(owners, "; "))
		for _, o := range th.Overlaps {
			overlaps++
			fmt.Fprintf(w, "    !! TWO OWNERS %s..%s (%s): %s\n", rel(o.From), rel(o.To), o.Dur().Round(time.Millisecond), t.LabelOf(o.Lane))
		}
		for _, st := range t.Stalls {
			if st.Task == th.Task {
				end := ""
				if st.AtEnd {
					end = " at the capture's end"
				}
				fmt.Fprintf(w, "    !  STALLED %s..%s (%s)%s: ran nowhere, %s %s\n", rel(st.From), rel(st.To), st.Dur().Round(time.Millisecond), end, t.LabelOf(st.Owner), st.Why)
			}
		}
		for _, g := range th.Gaps {
			switch {
			case g.Rebalance:
				rebalances++
				fmt.Fprintf(w, "       no owner %s..%s (%s) while a rebalance moved it\n", rel(g.From), rel(g.To), g.Dur().Round(time.Millisecond))
			case g.AtEnd:
				gaps++
				fmt.Fprintf(w, "    !  NO OWNER %s..%s (%s) at the capture's end\n", rel(g.From), rel(g.To), g.Dur().Round(time.Millisecond))
			default:
				gaps++
				fmt.Fprintf(w, "    !  NO OWNER %s..%s (%s) with no rebalance going on\n", rel(g.From), rel(g.To), g.Dur().Round(time.Millisecond))
			}
		}
	}
	fmt.Fprintf(w, "  %d tasks, %d times with two owners, %d times with no owner outside a rebalance, %d times with no owner while a rebalance moved the task\n", len(t.Tasks), overlaps, gaps, rebalances)
	t.writeStalls(w, rel)
	fmt.Fprintf(w, "\nerrors per client\n")
	none := true
	for _, ln := range t.Lanes {
		keys := make([]string, 0, len(ln.Errors))
		for k := range ln.Errors {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			none = false
			fmt.Fprintf(w, "  %s: %s ×%d\n", ln.Label, k, ln.Errors[k])
		}
	}
	if none {
		fmt.Fprintf(w, "  none\n")
	}
	fmt.Fprintf(w, "\ncoordinator events\n")
	for _, m := range t.Marks {
		who := m.Member
		if m.Lane != "" {
			who += " (" + t.LabelOf(m.Lane) + ")"
		}
		fmt.Fprintf(w, "  %s %s %s %s\n", rel(m.At), m.Kind, who, m.Message)
	}
}

// Gaps counts the times a task had no owner outside a rebalance (flagged).
func (t *Timeline) Gaps() int {
	n := 0
	for _, th := range t.Tasks {
		for _, g := range th.Gaps {
			if !g.Rebalance {
				n++
			}
		}
	}
	return n
}

// Overlaps counts the times a task had two owners.
func (t *Timeline) Overlaps() int {
	n := 0
	for _, th := range t.Tasks {
		n += len(th.Overlaps)
	}
	return n
}

// writeStalls writes the stalls' summary line and the rolling steps.
func (t *Timeline) writeStalls(w io.Writer, rel func(time.Time) string) {
	n, total, longest := t.StallTotals()
	fmt.Fprintf(w, "  %d stalls (a task ran nowhere because its owner was gone): %s task-time in all, the longest %s\n", n, total.Round(time.Millisecond), longest.Round(time.Millisecond))
	fmt.Fprintf(w, "\nrolling steps\n")
	if len(t.Steps) == 0 {
		fmt.Fprintf(w, "  none\n")
	}
	for _, s := range t.Steps {
		came := "none came by the capture's end"
		if s.CameLane != nil {
			came = "came " + s.CameLane.InstanceLabel() + " at " + rel(s.Came)
		}
		var tasks []string
		for _, tn := range s.Tasks {
			tasks = append(tasks, fmt.Sprintf("%s %s", tn.Task, tn.Dur.Round(time.Millisecond)))
		}
		if len(tasks) == 0 {
			tasks = []string{"none"}
		}
		fmt.Fprintf(w, "  went %s at %s (%s), %s; tasks with no running owner: %s\n", s.WentLane.InstanceLabel(), rel(s.Went), s.Why, came, strings.Join(tasks, ", "))
	}
}
