package harness

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SmokeClient is one instance of Kafka's smoke-test client (SmokeTestClient) in a rolling run.
type SmokeClient struct {
	Name          string // its directory under the run dir, and its name in errors
	Version       string // Kafka28 (kafka-streams 2.8.2), Kafka36 (3.6.2) or Kafka39 (3.9.2), classic only, or Kafka44
	GroupProtocol string // classic (default) or streams
	// InstanceID makes the instance a static member (group.instance.id; Kafka Streams adds
	// "-<thread>" for each stream thread's consumer).
	InstanceID string
	// SessionTimeout of a classic instance (session.timeout.ms; default 10s): Kafka Streams does
	// not leave its classic group on close, so a stopped instance keeps its tasks this long.
	SessionTimeout time.Duration
	// StateOf names an earlier client (stopped by now) whose state directory this one takes
	// over, as a rolling step restarts an instance on its disk: its stores, checkpoints and
	// process id (KAFKA-10716) carry over. Empty: a state directory of its own.
	StateOf string
}

func (c SmokeClient) String() string {
	p := c.GroupProtocol
	if p == "" {
		p = "classic"
	}
	s := fmt.Sprintf("%s (%s, %s", c.Name, c.Version, p)
	if c.InstanceID != "" {
		s += ", static " + c.InstanceID
	}
	if c.StateOf != "" {
		s += ", state of " + c.StateOf
	}
	return s + ")"
}

// SmokeRoll replaces one running client: Stop is closed cleanly (TERM: KafkaStreams.close),
// then Start is started. Either may be empty. Between, if set, runs once Stop has closed and
// before Start starts, and After once Start started, before the group settles (streamshift
// killed and restarted, say); Name names a step without Stop and Start. Settled, if set, runs
// once the group settled after the step, with what the step measured (to say how it ended).
type SmokeRoll struct {
	Stop    string
	Start   SmokeClient
	Between func(ctx context.Context, c SmokeControl) error
	After   func(ctx context.Context, c SmokeControl) error
	Settled func(ctx context.Context, step SmokeRollStep) error
	Name    string
}

// SmokeControl acts on the running smoke clients from a roll's hooks.
type SmokeControl struct {
	signal func(name string, sig syscall.Signal) error
	pid    func(name string) (int, error)
}

// PID is a running client's JVM process id (to find its connections, say).
func (c SmokeControl) PID(name string) (int, error) { return c.pid(name) }

// Pause freezes a client's JVM (SIGSTOP): no heartbeat, no processing, its sockets stay open.
func (c SmokeControl) Pause(name string) error { return c.signal(name, syscall.SIGSTOP) }

// Resume continues a paused client (SIGCONT).
func (c SmokeControl) Resume(name string) error { return c.signal(name, syscall.SIGCONT) }

func (r SmokeRoll) String() string {
	switch {
	case r.Name != "":
		return r.Name
	case r.Stop == "":
		return "start " + r.Start.String()
	case r.Start.Name == "":
		return "stop " + r.Stop
	}
	return fmt.Sprintf("roll %s to %s", r.Stop, r.Start)
}

// SmokeRollOptions configure RunKafkaSmokeRoll.
type SmokeRollOptions struct {
	Dir       string // run dir; must not exist or be empty
	Bootstrap string // driver and clients connect here (streamshift)
	Admin     string // where the topics are created (default Bootstrap)
	// Props are more properties of the driver and every client (e.g.
	// metadata.recovery.strategy for 3.x clients behind several proxies).
	Props     map[string]string
	Guarantee string // at_least_once (default) or exactly_once_v2
	// Duration of the driver's input (default 90s) and records per key (default 300). The
	// driver is always the 4.4 launcher (its input length is configurable).
	Duration      time.Duration
	RecordsPerKey int
	// Start are started one at a time before the driver, each waiting for the group to settle.
	Start []SmokeClient
	// Rolls run one at a time while the driver produces, RollDelay after it started (default 5s),
	// each waiting for the group to settle.
	Rolls     []SmokeRoll
	RollDelay time.Duration
	// Quiet is how long every running client must stay RUNNING, with the group at rest, to
	// count as settled (default 3s); SettleLimit bounds the wait (default 90s).
	Quiet       time.Duration
	SettleLimit time.Duration
	// AfterRolls, when set, runs once the last roll settled, while the clients still run (a
	// check of the group upstream, say); its error fails the run.
	AfterRolls func(ctx context.Context) error
	// MaxOverlap is the longest a task may process on two clients at once (default 500ms: the
	// lines are timed when the harness reads them).
	MaxOverlap time.Duration
	// Logf reports progress (t.Logf); nil is silent.
	Logf func(format string, args ...any)
}

// SmokeRollReport is what a rolling smoke run measured.
type SmokeRollReport struct {
	Steps []SmokeRollStep
	// InputEnd is when the driver printed its last "records produced" line, from its start.
	InputEnd time.Duration
	// Total is the run from the first client's start to the driver's exit.
	Total time.Duration
	// Overlaps are the periods in which a task processed records on two clients at once (from
	// the processors' init and close lines), longest first; TaskChanges counts the changes of
	// the clients' processing-task sets they were computed from.
	Overlaps    []Overlap
	TaskChanges int
}

// SmokeRollStep is one start or roll: when it began (from the driver's start; negative before
// it) and how long the group took to settle after it.
type SmokeRollStep struct {
	Name    string
	At      time.Duration
	Settled time.Duration
	// Running is from the step's start (the stop) to the last state change of the running
	// clients before the group settled: when every one was RUNNING for good. Settled adds the
	// Quiet window and the polling on top of it.
	Running time.Duration
	Group   string // the group as last described when it settled
	// Protocol is "streams" when streamshift served the group then, else the upstream classic
	// group's ("classic stream"); Classic counts the classic members of a streams group.
	Protocol string
	Classic  int
}

// smokeGroup is Kafka's smoke-test application.id.
const smokeGroup = "SmokeTest"

var (
	smokeStateLine = regexp.MustCompile(`: ([A-Z_]+) -> ([A-Z_]+)\s*$`)
	// SmokeTestUtil's processors print these when an active task's topology is initialised
	// (after restoration) and closed: between the two the task processes records here.
	smokeProcessorInit  = regexp.MustCompile(`^\[DEV\] initializing processor: topic=\S+ taskId=(\d+_\d+)`)
	smokeProcessorClose = regexp.MustCompile(`^Close processor for task (\d+_\d+)`)
)

// smokeInstance is a running smoke client, the state its listener last printed, and the
// tasks it processes.
type smokeInstance struct {
	SmokeClient
	p *proc

	mu         sync.Mutex
	state      string
	changed    time.Time
	processors map[string]int // open processors per task
	tasks      []Event        // "tasks" events: the processing tasks after each change
	end        time.Time      // when the JVM ended
}

func (s *smokeInstance) onLine(line string) { s.onLineAt(line, time.Now()) }

func (s *smokeInstance) onLineAt(line string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := smokeStateLine.FindStringSubmatch(line); m != nil {
		s.state, s.changed = m[2], now
		return
	}
	delta, task := 0, ""
	if m := smokeProcessorInit.FindStringSubmatch(line); m != nil {
		delta, task = 1, m[1]
	} else if m := smokeProcessorClose.FindStringSubmatch(line); m != nil {
		delta, task = -1, m[1]
	} else {
		return
	}
	if s.processors == nil {
		s.processors = map[string]int{}
	}
	before := s.processors[task] > 0
	s.processors[task] = max(0, s.processors[task]+delta)
	if before == (s.processors[task] > 0) {
		return
	}
	active := make([]string, 0, len(s.processors))
	for t, n := range s.processors {
		if n > 0 {
			active = append(active, t)
		}
	}
	sort.Strings(active)
	s.tasks = append(s.tasks, Event{App: s.Name, Time: now, Kind: "tasks", Active: active})
}

// taskEvents returns the processing-task events and the JVM's end (zero while it runs).
func (s *smokeInstance) taskEvents() ([]Event, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.tasks...), s.end
}

func (s *smokeInstance) lastState() (string, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.changed
}

// RunKafkaSmokeRoll runs Kafka's smoke test while its clients are replaced one at a time: the
// Start clients come up (each waiting for the group to settle), the driver starts producing,
// then each roll closes one client cleanly and starts its successor, possibly on another
// kafka-streams version or group protocol, and waits for the group to settle again. It passes
// when every roll settled while the driver was still producing, and the driver verified every
// output and printed SUCCESS.
//
// Settled means: every running client's last state is RUNNING, none changed state for Quiet,
// and the group, as described through Bootstrap, holds exactly the running clients and is at
// rest (StreamsGroupDescribe when streamshift serves the group: Stable, every member at its
// target assignment; else DescribeGroups of the upstream classic group: Stable, the anchor not
// counted).
func RunKafkaSmokeRoll(ctx context.Context, o SmokeRollOptions) (*SmokeRollReport, error) {
	o.defaults()
	// The driver is the 4.4 launcher; the clients may be any smoke version.
	modules := []string{"systest-" + Kafka44}
	for _, r := range o.Rolls {
		if r.Start.Name != "" {
			modules = append(modules, "systest-"+r.Start.Version)
		}
	}
	for _, c := range o.Start {
		modules = append(modules, "systest-"+c.Version)
	}
	if err := CheckBuilt(modules...); err != nil {
		return nil, err
	}
	if err := createSmokeRun(ctx, o.Dir, o.Admin); err != nil {
		return nil, err
	}
	base := smokeProps(o.Bootstrap, o.Guarantee, o.Duration, o.RecordsPerKey)
	for k, v := range o.Props {
		base[k] = v
	}
	describer, err := newGroupDescriber(o.Bootstrap)
	if err != nil {
		return nil, err
	}
	defer describer.close()

	rep := &SmokeRollReport{}
	var (
		mu      sync.Mutex
		running = map[string]*smokeInstance{}
		all     []*smokeInstance
		// stateDirs is each started client's state directory, by name.
		stateDirs = map[string]string{}
	)
	defer func() {
		for _, c := range all {
			_ = c.p.stop(70 * time.Second)
		}
	}()
	start := func(c SmokeClient) error {
		if !slices.Contains(smokeVersions, c.Version) {
			return fmt.Errorf("smoke client %s: version %q, want one of %v", c.Name, c.Version, smokeVersions)
		}
		if c.GroupProtocol == "streams" && c.Version != Kafka44 {
			return fmt.Errorf("smoke client %s: kafka-streams %s has no streams protocol", c.Name, c.Version)
		}
		mu.Lock()
		_, dup := running[c.Name]
		_, prevRunning := running[c.StateOf]
		stateDir, prevKnown := stateDirs[c.StateOf]
		mu.Unlock()
		if dup {
			return fmt.Errorf("smoke client %s is already running", c.Name)
		}
		switch {
		case c.StateOf == "":
			stateDir = filepath.Join(o.Dir, c.Name, "state")
		case !prevKnown:
			return fmt.Errorf("smoke client %s: no earlier client %s to take the state directory of", c.Name, c.StateOf)
		case prevRunning:
			// Kafka Streams would wait for the directory's lock: a roll stops first.
			return fmt.Errorf("smoke client %s: %s, whose state directory it takes, still runs", c.Name, c.StateOf)
		}
		d := filepath.Join(o.Dir, c.Name)
		if entries, err := os.ReadDir(d); err == nil && len(entries) > 0 {
			return fmt.Errorf("smoke client dir %s is not empty", d)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		props := map[string]string{}
		for k, v := range base {
			props[k] = v
		}
		// SmokeTestClient's default state dir comes from TestUtils.tempDirectory(), which a
		// shutdown hook deletes while KafkaStreams.close (another hook) still flushes into it:
		// on 3.x that closes tasks dirty on every clean stop. A state dir of our own is kept.
		props["state.dir"] = stateDir
		props["processing.guarantee"] = smokeGuarantee(c.Version, props["processing.guarantee"])
		if c.InstanceID != "" {
			props["group.instance.id"] = c.InstanceID
		}
		if c.GroupProtocol == "streams" {
			props["group.protocol"] = "streams"
		} else {
			props["session.timeout.ms"] = fmt.Sprint(c.SessionTimeout.Milliseconds())
		}
		propsFile := filepath.Join(d, "smoke.properties")
		if err := writeProps(propsFile, props); err != nil {
			return err
		}
		inst := &smokeInstance{SmokeClient: c}
		p, err := startProc("smoke "+c.Name, filepath.Join(d, "out"), filepath.Join(d, "log"), inst.onLine, nil, nil,
			filepath.Join(Root(), "bin", "systest.sh"), "run", c.Version, d, propsFile, "process")
		if err != nil {
			return err
		}
		inst.p = p
		go func() {
			<-p.done
			inst.mu.Lock()
			inst.end = time.Now()
			inst.mu.Unlock()
		}()
		mu.Lock()
		running[c.Name] = inst
		all = append(all, inst)
		stateDirs[c.Name] = stateDir
		mu.Unlock()
		o.Logf("started smoke client %s", c)
		return nil
	}
	stop := func(name string) error {
		mu.Lock()
		inst, ok := running[name]
		delete(running, name)
		mu.Unlock()
		if !ok {
			return fmt.Errorf("no running smoke client %s", name)
		}
		// SmokeTestClient closes with a one-minute timeout; a close that hangs is a failure.
		if err := inst.p.stop(70 * time.Second); err != nil {
			return fmt.Errorf("close smoke client %s: %w", name, err)
		}
		if b, err := os.ReadFile(filepath.Join(o.Dir, name, "out")); err == nil && !strings.Contains(string(b), "SMOKE-TEST-CLIENT-CLOSED") {
			return fmt.Errorf("smoke client %s did not close cleanly (no SMOKE-TEST-CLIENT-CLOSED in %s)", name, filepath.Join(o.Dir, name, "out"))
		}
		o.Logf("closed smoke client %s", name)
		return nil
	}
	runningProc := func(name string) (*proc, error) {
		mu.Lock()
		inst, ok := running[name]
		mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("no running smoke client %s", name)
		}
		return inst.p, nil
	}
	control := SmokeControl{signal: func(name string, sig syscall.Signal) error {
		p, err := runningProc(name)
		if err != nil {
			return err
		}
		return p.cmd.Process.Signal(sig)
	}, pid: func(name string) (int, error) {
		p, err := runningProc(name)
		if err != nil {
			return 0, err
		}
		return p.pid(), nil
	}}
	// lastChange is the latest state change of the running clients.
	lastChange := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		var last time.Time
		for _, inst := range running {
			if _, at := inst.lastState(); at.After(last) {
				last = at
			}
		}
		return last
	}
	// settle waits until the group is at rest with exactly the running clients.
	settle := func(step string) (describedGroup, error) {
		sctx, cancel := context.WithTimeout(ctx, o.SettleLimit)
		defer cancel()
		var last describedGroup
		for {
			mu.Lock()
			insts := make([]*smokeInstance, 0, len(running))
			for _, inst := range running {
				insts = append(insts, inst)
			}
			mu.Unlock()
			ok := true
			var why string
			for _, inst := range insts {
				if inst.p.exited() {
					return last, fmt.Errorf("%s: smoke client %s exited (%v), see %s", step, inst.Name, inst.p.err, filepath.Join(o.Dir, inst.Name))
				}
				st, at := inst.lastState()
				if st != "RUNNING" || time.Since(at) < o.Quiet {
					ok, why = false, fmt.Sprintf("client %s is %s", inst.Name, orNone(st))
				}
			}
			if ok {
				g, err := describer.describe(sctx, smokeGroup)
				if err != nil {
					ok, why = false, err.Error()
				} else {
					last = g
					if !g.atRest || g.members != len(insts) {
						ok, why = false, fmt.Sprintf("group not at rest with %d members: %s", len(insts), g)
					}
				}
			}
			if ok {
				return last, nil
			}
			select {
			case <-sctx.Done():
				return last, fmt.Errorf("%s: group did not settle within %s: %s", step, o.SettleLimit, why)
			case <-time.After(500 * time.Millisecond):
			}
		}
	}

	begin := time.Now()
	var starts []time.Time // of the Start steps, made relative to the driver's start below
	for _, c := range o.Start {
		at := time.Now()
		if err := start(c); err != nil {
			return rep, err
		}
		g, err := settle("start " + c.String())
		if err != nil {
			return rep, err
		}
		starts = append(starts, at)
		rep.Steps = append(rep.Steps, SmokeRollStep{Name: "start " + c.String(), Settled: time.Since(at), Group: g.String(), Protocol: g.protocol, Classic: g.classic})
		o.Logf("settled after start %s in %s: %s", c.Name, time.Since(at).Round(time.Millisecond), g)
	}

	var (
		lmu      sync.Mutex
		lines    []string
		inputEnd time.Time
	)
	dd := filepath.Join(o.Dir, "driver")
	if err := os.MkdirAll(dd, 0o755); err != nil {
		return rep, err
	}
	driverProps := filepath.Join(dd, "smoke.properties")
	if err := writeProps(driverProps, base); err != nil {
		return rep, err
	}
	driver, err := startProc("smoke driver", filepath.Join(dd, "out"), filepath.Join(dd, "log"), func(line string) {
		lmu.Lock()
		lines = append(lines, line)
		if strings.HasSuffix(line, " records produced") {
			inputEnd = time.Now()
		}
		lmu.Unlock()
	}, nil, nil, filepath.Join(Root(), "bin", "systest.sh"), "run", Kafka44, dd, driverProps, "run")
	if err != nil {
		return rep, err
	}
	driverStart := time.Now()
	for i, at := range starts {
		rep.Steps[i].At = at.Sub(driverStart)
	}
	defer driver.stop(10 * time.Second)
	o.Logf("smoke driver started: %s of input", o.Duration)

	select {
	case <-time.After(o.RollDelay):
	case <-driver.done:
	case <-ctx.Done():
		return rep, ctx.Err()
	}
	for _, r := range o.Rolls {
		name := r.String()
		if driver.exited() {
			return rep, fmt.Errorf("%s: the smoke driver exited before the roll (%v), see %s", name, driver.err, dd)
		}
		t0 := time.Now()
		at := t0.Sub(driverStart)
		var steps []func(context.Context, SmokeControl) error
		if r.Stop != "" {
			steps = append(steps, func(context.Context, SmokeControl) error { return stop(r.Stop) })
		}
		steps = append(steps, r.Between)
		if r.Start.Name != "" {
			steps = append(steps, func(context.Context, SmokeControl) error { return start(r.Start) })
		}
		for _, do := range append(steps, r.After) {
			if do == nil {
				continue
			}
			if err := do(ctx, control); err != nil {
				return rep, fmt.Errorf("%s: %w", name, err)
			}
		}
		g, err := settle(name)
		if err != nil {
			return rep, err
		}
		step := SmokeRollStep{Name: name, At: at, Settled: time.Since(t0), Running: max(0, lastChange().Sub(t0)), Group: g.String(), Protocol: g.protocol, Classic: g.classic}
		rep.Steps = append(rep.Steps, step)
		o.Logf("settled after %s in %s (every client RUNNING for good %s after the step's start): %s", name,
			step.Settled.Round(time.Millisecond), step.Running.Round(time.Millisecond), g)
		if r.Settled != nil {
			if err := r.Settled(ctx, step); err != nil {
				return rep, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	rollsDone := time.Now()
	if o.AfterRolls != nil {
		if err := o.AfterRolls(ctx); err != nil {
			return rep, fmt.Errorf("after the rolls: %w", err)
		}
	}

	select {
	case <-driver.done:
	case <-ctx.Done():
		return rep, fmt.Errorf("smoke driver: %w (see %s)", ctx.Err(), dd)
	}
	rep.Total = time.Since(begin)
	lmu.Lock()
	defer lmu.Unlock()
	if !inputEnd.IsZero() {
		rep.InputEnd = inputEnd.Sub(driverStart)
	}
	success := false
	for _, l := range lines {
		if strings.TrimSpace(l) == "SUCCESS" {
			success = true
		}
	}
	if !success {
		tail := lines
		if len(tail) > 15 {
			tail = tail[len(tail)-15:]
		}
		return rep, fmt.Errorf("smoke driver did not print SUCCESS (exit %v), last lines:\n%s", driver.err, strings.Join(tail, "\n"))
	}
	// The rolls must have happened under input, or the run proved less than it claims.
	if len(o.Rolls) > 0 && rollsDone.After(inputEnd) {
		return rep, fmt.Errorf("the rolls ended %s after the driver's input (%s of input): raise Duration so the migration happens mid-run",
			rollsDone.Sub(inputEnd).Round(time.Millisecond), o.Duration)
	}
	var events []Event
	ends := map[string]time.Time{}
	for _, inst := range all {
		evs, end := inst.taskEvents()
		events = append(events, evs...)
		if !end.IsZero() {
			ends[inst.Name] = end
		}
	}
	rep.TaskChanges = len(events)
	rep.Overlaps = ActiveOverlaps(events, ends, time.Now())
	if len(rep.Overlaps) > 0 && rep.Overlaps[0].Dur > o.MaxOverlap {
		return rep, fmt.Errorf("%s (processing on both, from the clients' processor lines)", rep.Overlaps[0])
	}
	for _, inst := range all {
		if b, err := os.ReadFile(filepath.Join(o.Dir, inst.Name, "out")); err == nil && strings.Contains(string(b), "SMOKE-TEST-CLIENT-EXCEPTION") {
			return rep, fmt.Errorf("smoke client %s reported SMOKE-TEST-CLIENT-EXCEPTION (see %s)", inst.Name, filepath.Join(o.Dir, inst.Name))
		}
	}
	return rep, nil
}

func (o *SmokeRollOptions) defaults() {
	o.Admin = cmp.Or(o.Admin, o.Bootstrap)
	o.Guarantee = cmp.Or(o.Guarantee, "at_least_once")
	o.Duration = cmp.Or(o.Duration, 90*time.Second)
	o.RecordsPerKey = cmp.Or(o.RecordsPerKey, 300)
	o.RollDelay = cmp.Or(o.RollDelay, 5*time.Second)
	o.Quiet = cmp.Or(o.Quiet, 3*time.Second)
	o.SettleLimit = cmp.Or(o.SettleLimit, 90*time.Second)
	o.MaxOverlap = cmp.Or(o.MaxOverlap, 500*time.Millisecond)
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	for _, cs := range [][]SmokeClient{o.Start} {
		for i := range cs {
			cs[i].fill()
		}
	}
	for i := range o.Rolls {
		o.Rolls[i].Start.fill()
	}
}

func (c *SmokeClient) fill() {
	if c.GroupProtocol == "" {
		c.GroupProtocol = "classic"
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = 10 * time.Second
	}
}

func orNone(s string) string {
	if s == "" {
		return "not started"
	}
	return s
}
