//go:build kafkajava

package assignor

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"

	"github.com/streamshift/streamshift/internal/kafkajava"
)

// TestStickyAgainstKafka runs Kafka 4.4's Java StickyTaskAssignor
// (bench/assignor-java's AssignorOracle) on the random groups of the
// property test and compares the outcome with ours. Kafka breaks ties by
// hash-map and heap order and we by process and member id, so layouts
// differ; what must agree is the shape: every task active once, both
// results within the same rules, the same number of standbys placed.
// Balance and stickiness move with the ties, in both directions, so they
// are only reported. It needs Java and the Maven build:
//
//	(cd bench/assignor-java && mvn -q package)
//	go test -tags kafkajava -run AgainstKafka -v ./coordinator/streams/assignor/
func TestStickyAgainstKafka(t *testing.T) {
	oracle := kafkajava.Find(t, "streamshift.bench.AssignorOracle")
	type memberJSON struct {
		MemberID    string                      `json:"memberId"`
		ProcessID   string                      `json:"processId"`
		Active      Tasks                       `json:"active,omitempty"`
		Standby     Tasks                       `json:"standby,omitempty"`
		TaskOffsets map[string]map[string]int64 `json:"taskOffsets,omitempty"`
	}
	type subtopologyJSON struct {
		ID       string `json:"id"`
		NumTasks int32  `json:"numTasks"`
		Stateful bool   `json:"stateful"`
	}
	type inputJSON struct {
		NumStandbyReplicas int               `json:"numStandbyReplicas"`
		Subtopologies      []subtopologyJSON `json:"subtopologies"`
		Members            []memberJSON      `json:"members"`
	}
	r := rand.New(rand.NewPCG(17, 19))
	var specs []GroupSpec
	var topos []describer
	var inputs []inputJSON
	for range 2000 {
		spec, topo := randomGroup(r)
		n, _ := strconv.Atoi(spec.Configs[ConfigNumStandbyReplicas])
		in := inputJSON{NumStandbyReplicas: n}
		for _, s := range topo {
			in.Subtopologies = append(in.Subtopologies, subtopologyJSON{s.ID, s.NumTasks, s.Stateful})
		}
		var ids []string
		for id := range spec.Members {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			m := spec.Members[id]
			mj := memberJSON{MemberID: id, ProcessID: m.ProcessID, Active: m.ActiveTasks, Standby: m.StandbyTasks}
			if m.TaskOffsets != nil {
				mj.TaskOffsets = map[string]map[string]int64{}
				for s, offs := range m.TaskOffsets {
					mj.TaskOffsets[s] = map[string]int64{}
					for p, o := range offs {
						mj.TaskOffsets[s][strconv.Itoa(int(p))] = o
					}
				}
			}
			in.Members = append(in.Members, mj)
		}
		specs, topos, inputs = append(specs, spec), append(topos, topo), append(inputs, in)
	}
	var results []struct {
		Error   string `json:"error"`
		Members map[string]struct {
			Active  Tasks `json:"active"`
			Standby Tasks `json:"standby"`
		} `json:"members"`
	}
	oracle.Run(t, inputs, &results)

	var stickierGo, stickierJava, equalSticky int
	spread := map[[2]int]int{} // (ours, Kafka's) max-min active tasks per member
	for i, want := range results {
		ours, err := StickyTaskAssignor{}.Assign(specs[i], topos[i])
		if (err != nil) != (want.Error != "") {
			t.Fatalf("case %d: error %v, Kafka %q", i, err, want.Error)
		}
		if err != nil {
			continue
		}
		theirs := GroupAssignment{Members: map[string]MemberAssignment{}}
		for id, m := range want.Members {
			theirs.Members[id] = MemberAssignment{ActiveTasks: m.Active, StandbyTasks: m.Standby}
		}
		checkInvariants(t, specs[i], topos[i], theirs) // Kafka's result obeys the same rules
		g, k := shape(specs[i], ours), shape(specs[i], theirs)
		if g.standbys != k.standbys {
			t.Errorf("case %d: ours %+v, Kafka %+v\n%s", i, g, k, mustJSON(inputs[i]))
		}
		spread[[2]int{g.activeSpread, k.activeSpread}]++
		switch {
		case g.kept > k.kept:
			stickierGo++
		case g.kept < k.kept:
			stickierJava++
		default:
			equalSticky++
		}
	}
	t.Logf("kept previous tasks: equal %d, more with ours %d, more with Kafka's %d", equalSticky, stickierGo, stickierJava)
	t.Logf("active spread (ours, Kafka's): %v", spread)
}

type shapeOf struct {
	standbys, activeSpread, kept int
}

func shape(spec GroupSpec, ga GroupAssignment) shapeOf {
	var s shapeOf
	lo, hi := -1, 0
	for id, a := range ga.Members {
		n := count(a.ActiveTasks)
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
		s.standbys += count(a.StandbyTasks)
		prev := spec.Members[id]
		for sub, parts := range a.ActiveTasks {
			for _, p := range parts {
				if contains(prev.ActiveTasks[sub], p) {
					s.kept++
				}
			}
		}
	}
	s.activeSpread = hi - lo
	return s
}

func mustJSON(v any) string {
	raw, _ := json.Marshal(v)
	return fmt.Sprintf("%s", raw)
}
