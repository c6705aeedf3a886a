// Command compare runs streamshift's sticky task assignor and Kafka 4.4's
// Java StickyTaskAssignor on the identical input and prints time, memory,
// balance and stickiness of both. Run it through ../run.sh, which builds
// the Java side with Maven first.
//
// It owns the comparison only: it reads the assignor through its public
// functions and changes nothing of it.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

type subtopologyJSON struct {
	ID       string `json:"id"`
	NumTasks int32  `json:"numTasks"`
	Stateful bool   `json:"stateful"`
}

type memberJSON struct {
	MemberID    string                      `json:"memberId"`
	ProcessID   string                      `json:"processId"`
	Active      map[string][]int32          `json:"active,omitempty"`
	Standby     map[string][]int32          `json:"standby,omitempty"`
	TaskOffsets map[string]map[string]int64 `json:"taskOffsets,omitempty"`
}

type inputJSON struct {
	NumStandbyReplicas int               `json:"numStandbyReplicas"`
	Subtopologies      []subtopologyJSON `json:"subtopologies"`
	Members            []memberJSON      `json:"members"`
}

type memberResult struct {
	Active  map[string][]int32 `json:"active"`
	Standby map[string][]int32 `json:"standby"`
}

type resultJSON struct {
	Members map[string]memberResult `json:"members"`
}

type javaTiming struct {
	Java          string `json:"java"`
	MedianNanos   int64  `json:"medianNanos"`
	MeanNanos     int64  `json:"meanNanos"`
	MinNanos      int64  `json:"minNanos"`
	RetainedBytes int64  `json:"retainedBytes"`
}

type describer []assignor.Subtopology

func (d describer) Subtopologies() []assignor.Subtopology { return d }

func main() {
	var (
		processes      = flag.Int("processes", 200, "processes (Kafka Streams instances)")
		membersPerProc = flag.Int("members-per-process", 5, "members (stream threads) per process")
		subtopologies  = flag.Int("subtopologies", 10, "subtopologies")
		tasksPerSub    = flag.Int("tasks", 1000, "tasks (partitions) per subtopology")
		standbys       = flag.Int("standbys", 1, "num.standby.replicas")
		warmup         = flag.Int("warmup", 20, "warm-up assignments per side")
		iterations     = flag.Int("iterations", 50, "measured assignments per side")
		javaDir        = flag.String("java-dir", ".", "bench/assignor-java, built with mvn package")
		workDir        = flag.String("work", os.TempDir(), "where to write inputs and results")
		rounds         = flag.Int("rounds", 3, "rounds of both sides; the ratio reported is the median over rounds")
	)
	flag.Parse()

	r := rand.New(rand.NewPCG(42, 4242))
	uuid := func() string {
		return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
	}
	in := inputJSON{NumStandbyReplicas: *standbys}
	for i := range *subtopologies {
		in.Subtopologies = append(in.Subtopologies, subtopologyJSON{ID: strconv.Itoa(i), NumTasks: int32(*tasksPerSub), Stateful: true})
	}
	var procIDs []string
	for range *processes {
		pid := uuid()
		procIDs = append(procIDs, pid)
		for range *membersPerProc {
			in.Members = append(in.Members, memberJSON{MemberID: uuid(), ProcessID: pid})
		}
	}

	fmt.Printf("sticky task assignor: %d members on %d processes, %d tasks (%d subtopologies, all stateful), %d standby\n\n",
		len(in.Members), *processes, *subtopologies**tasksPerSub, *subtopologies, *standbys)
	fmt.Printf("%-6s %-6s %10s %10s %7s %10s %10s %8s %8s %11s %9s %9s\n",
		"input", "side", "median", "mean", "ratio", "alloc/op", "retained", "act-sprd", "tot-sprd", "standbys", "act-kept", "sby-kept")

	// Cold: nobody has tasks yet.
	var coldRatios, churnRatios []float64
	cold, ratio := compare("cold", in, *warmup, *iterations, *javaDir, *workDir)
	coldRatios = append(coldRatios, ratio)

	// Churn: the cold result is the current assignment; one process (its
	// members) leaves and a new process joins.
	churn := inputJSON{NumStandbyReplicas: in.NumStandbyReplicas, Subtopologies: in.Subtopologies}
	gone := procIDs[len(procIDs)/3]
	for _, m := range in.Members {
		if m.ProcessID == gone {
			continue
		}
		a := cold.Members[m.MemberID]
		m.Active, m.Standby = a.Active, a.Standby
		churn.Members = append(churn.Members, m)
	}
	pid := uuid()
	for range *membersPerProc {
		churn.Members = append(churn.Members, memberJSON{MemberID: uuid(), ProcessID: pid})
	}
	_, ratio = compare("churn", churn, *warmup, *iterations, *javaDir, *workDir)
	churnRatios = append(churnRatios, ratio)
	// The machine may be shared: more rounds, alternating sides, and the
	// median ratio, so that a burst of load on one side does not decide.
	for range *rounds - 1 {
		_, ratio = compare("cold", in, *warmup, *iterations, *javaDir, *workDir)
		coldRatios = append(coldRatios, ratio)
		_, ratio = compare("churn", churn, *warmup, *iterations, *javaDir, *workDir)
		churnRatios = append(churnRatios, ratio)
	}
	fmt.Printf("\nJava/Go median ratio over %d rounds: cold %.2f %v, churn %.2f %v\n",
		*rounds, medianOf(coldRatios), coldRatios, medianOf(churnRatios), churnRatios)

	fmt.Println(`
median/mean: time of one full target assignment; ratio: Java median / Go median.
alloc/op: Go bytes allocated per assignment; retained: heap held by one result (after GC).
act-sprd / tot-sprd: max - min active / all tasks per member. standbys: assigned / requested.
act-kept / sby-kept: previous active / standby tasks of surviving members kept by the same member.`)
}

// compare runs both assignors on in and returns the Go result.
func compare(name string, in inputJSON, warmup, iterations int, javaDir, workDir string) (resultJSON, float64) {
	raw, err := json.Marshal(in)
	check(err)
	inPath := filepath.Join(workDir, "assignor-"+name+"-input.json")
	outPath := filepath.Join(workDir, "assignor-"+name+"-java.json")
	check(os.WriteFile(inPath, raw, 0o644))

	// The Go side reads the same file back, so both sides see one input.
	var parsed inputJSON
	check(json.Unmarshal(raw, &parsed))
	spec, topo := toSpec(parsed)

	var ga assignor.GroupAssignment
	for range warmup {
		ga = mustAssign(spec, topo)
	}
	nanos := make([]int64, iterations)
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	for i := range nanos {
		start := time.Now()
		ga = mustAssign(spec, topo)
		nanos[i] = time.Since(start).Nanoseconds()
	}
	runtime.ReadMemStats(&ms1)
	allocPerOp := (ms1.TotalAlloc - ms0.TotalAlloc) / uint64(iterations)
	// Heap retained by one result, as the Java side measures it.
	ga = assignor.GroupAssignment{}
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	ga = mustAssign(spec, topo)
	runtime.GC()
	runtime.ReadMemStats(&ms1)
	retained := int64(ms1.HeapAlloc) - int64(ms0.HeapAlloc)
	goMedian, goMean := stats(nanos)
	goResult := fromGo(ga)

	cmd := exec.Command("java", "-Xms1g", "-Xmx1g", "-cp",
		filepath.Join(javaDir, "target", "assignor-java-1.0.jar")+string(os.PathListSeparator)+filepath.Join(javaDir, "target", "lib", "*"),
		"streamshift.bench.AssignorBench", inPath, outPath, strconv.Itoa(warmup), strconv.Itoa(iterations))
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	check(cmd.Run())
	var jt javaTiming
	check(json.Unmarshal(stdout.Bytes(), &jt))
	var javaResult resultJSON
	javaRaw, err := os.ReadFile(outPath)
	check(err)
	check(json.Unmarshal(javaRaw, &javaResult))

	gm, jm := measure(parsed, goResult), measure(parsed, javaResult)
	row := func(side string, median, mean int64, ratio string, alloc, retained string, m metrics) {
		fmt.Printf("%-6s %-6s %8.2fms %8.2fms %7s %10s %10s %8d %8d %11s %9s %9s\n", name, side,
			float64(median)/1e6, float64(mean)/1e6, ratio, alloc, retained, m.activeSpread, m.totalSpread,
			fmt.Sprintf("%d/%d", m.standbys, m.standbysWanted), pct(m.activeKept, m.activePrev), pct(m.standbyKept, m.standbyPrev))
	}
	mib := func(b int64) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }
	row("go", goMedian, goMean, "1.00", mib(int64(allocPerOp)), mib(retained), gm)
	row("java", jt.MedianNanos, jt.MeanNanos, fmt.Sprintf("%.2f", float64(jt.MedianNanos)/float64(goMedian)),
		"-", mib(jt.RetainedBytes), jm)
	if gm.invalid != "" || jm.invalid != "" {
		fmt.Printf("INVALID: go=%q java=%q\n", gm.invalid, jm.invalid)
		os.Exit(1)
	}
	return goResult, math.Round(100*float64(jt.MedianNanos)/float64(goMedian)) / 100
}

func medianOf(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func toSpec(in inputJSON) (assignor.GroupSpec, describer) {
	spec := assignor.GroupSpec{
		Members: make(map[string]assignor.MemberSpec, len(in.Members)),
		Configs: map[string]string{assignor.ConfigNumStandbyReplicas: strconv.Itoa(in.NumStandbyReplicas)},
	}
	for _, m := range in.Members {
		spec.Members[m.MemberID] = assignor.MemberSpec{ProcessID: m.ProcessID, ActiveTasks: m.Active, StandbyTasks: m.Standby}
	}
	var d describer
	for _, s := range in.Subtopologies {
		d = append(d, assignor.Subtopology{ID: s.ID, NumTasks: s.NumTasks, Stateful: s.Stateful})
	}
	return spec, d
}

func mustAssign(spec assignor.GroupSpec, topo describer) assignor.GroupAssignment {
	ga, err := assignor.StickyTaskAssignor{}.Assign(spec, topo)
	check(err)
	return ga
}

func fromGo(ga assignor.GroupAssignment) resultJSON {
	out := resultJSON{Members: map[string]memberResult{}}
	for id, a := range ga.Members {
		out.Members[id] = memberResult{Active: a.ActiveTasks, Standby: a.StandbyTasks}
	}
	return out
}

type metrics struct {
	activeSpread, totalSpread int
	standbys, standbysWanted  int
	activeKept, activePrev    int
	standbyKept, standbyPrev  int
	invalid                   string
}

// measure computes balance and stickiness of a result, and checks it: all
// tasks active exactly once, no process holding a task twice.
func measure(in inputJSON, res resultJSON) metrics {
	var m metrics
	type task struct {
		sub  string
		part int32
	}
	proc := map[string]string{}
	prevActive, prevStandby := map[task]string{}, map[task]map[string]bool{}
	for _, mem := range in.Members {
		proc[mem.MemberID] = mem.ProcessID
		for s, ps := range mem.Active {
			for _, p := range ps {
				prevActive[task{s, p}] = mem.MemberID
			}
		}
		for s, ps := range mem.Standby {
			for _, p := range ps {
				if prevStandby[task{s, p}] == nil {
					prevStandby[task{s, p}] = map[string]bool{}
				}
				prevStandby[task{s, p}][mem.MemberID] = true
			}
		}
	}
	total := 0
	for _, s := range in.Subtopologies {
		total += int(s.NumTasks)
		if s.Stateful {
			m.standbysWanted += int(s.NumTasks) * in.NumStandbyReplicas
		}
	}
	active := map[task]string{}
	held := map[task]map[string]bool{}
	hold := func(t task, member string) {
		if held[t] == nil {
			held[t] = map[string]bool{}
		}
		if held[t][proc[member]] {
			m.invalid = fmt.Sprintf("process of %s holds %v twice", member, t)
		}
		held[t][proc[member]] = true
	}
	minA, maxA, minT, maxT := -1, 0, -1, 0
	var ids []string
	for id := range res.Members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		a := res.Members[id]
		na, ns := 0, 0
		for s, ps := range a.Active {
			for _, p := range ps {
				t := task{s, p}
				if _, dup := active[t]; dup {
					m.invalid = fmt.Sprintf("%v active twice", t)
				}
				active[t] = id
				hold(t, id)
				na++
				if prevActive[t] == id {
					m.activeKept++
				}
			}
		}
		for s, ps := range a.Standby {
			for _, p := range ps {
				t := task{s, p}
				hold(t, id)
				ns++
				if prevStandby[t][id] {
					m.standbyKept++
				}
			}
		}
		m.standbys += ns
		if minA < 0 || na < minA {
			minA = na
		}
		if minT < 0 || na+ns < minT {
			minT = na + ns
		}
		maxA, maxT = max(maxA, na), max(maxT, na+ns)
	}
	if len(active) != total {
		m.invalid = fmt.Sprintf("%d of %d tasks active", len(active), total)
	}
	m.activeSpread, m.totalSpread = maxA-minA, maxT-minT
	m.activePrev, m.standbyPrev = len(prevActive), 0
	for _, s := range prevStandby {
		m.standbyPrev += len(s)
	}
	return m
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

func stats(ns []int64) (median, mean int64) {
	s := append([]int64(nil), ns...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var sum int64
	for _, n := range s {
		sum += n
	}
	return s[len(s)/2], sum / int64(len(s))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}
