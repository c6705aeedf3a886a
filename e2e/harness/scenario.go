package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Scenario is a scripted run of CountApp instances under continuous input.
type Scenario struct {
	Name   string // for reports
	Broker string // Kafka28, Kafka35, Kafka39 or Kafka44
	// BrokerOverrides are extra server.properties lines.
	BrokerOverrides []string

	AppBuild      string // App44, App39, App36 or App28
	GroupProtocol string // "classic" or "streams"
	Guarantee     string // "at_least_once" or "exactly_once_v2"
	// AppExtra are extra key=value arguments for every instance.
	AppExtra []string

	Partitions int           // input and output partitions (default 4)
	Rate       int           // input records per second (default 100)
	Groups     int           // distinct count keys (default 20)
	Hold       time.Duration // how long each step keeps running after the group settled (default 15s; E2E_HOLD)
	Quiet      time.Duration // how long the group must stay balanced to count as settled (default 3s)
	StepLimit  time.Duration // max time for a step to settle (default 120s)

	// Route returns the address apps connect to: nil means the broker itself. A proxy
	// scenario starts the proxy here (listening in r.Dir) and returns its address.
	Route func(ctx context.Context, r *Run) (string, error)
	// ClientsViaRoute makes the input producer and output collector use the routed address too.
	ClientsViaRoute bool
	// MeasureOnly: a baseline whose outcome is Kafka's, run to measure its steps. A failure
	// (an instance dying on Kafka's own error, a step not settling, output not caught up or
	// not exact) does not fail the test: it is recorded in Report.Problems, a failed step
	// ends the run there, and the report keeps the steps measured before it. The test
	// asserts what it must show from the report.
	MeasureOnly bool

	Steps []Step
}

// Step is one action of a scenario; after it the runner waits for the group
// to settle and holds it under input (Scenario.Hold).
type Step struct {
	Name string
	Do   func(ctx context.Context, r *Run) error
	// Check: the step only looks (logs, the status page, a describe) and
	// changes nothing, so it has no settling wait and no hold.
	Check bool
}

// StartInstances starts named app instances at once.
func StartInstances(names ...string) Step {
	return Step{Name: "start " + strings.Join(names, ","), Do: func(ctx context.Context, r *Run) error {
		for _, n := range names {
			if _, err := r.StartApp(n); err != nil {
				return err
			}
		}
		return nil
	}}
}

// StartInstanceWith starts one instance with its options changed by opt (e.g. another
// GroupProtocol or Build: a rolling migration starts the new instances this way).
func StartInstanceWith(name string, opt func(*AppOptions)) Step {
	return Step{Name: "start " + name + " (own options)", Do: func(ctx context.Context, r *Run) error {
		_, err := r.StartAppWith(name, opt)
		return err
	}}
}

// ReplaceInstance stops old cleanly and starts new with opt in one step: the roll of one
// instance (instance names are unique per run, so the restarted one gets a new name).
func ReplaceInstance(old, new string, opt func(*AppOptions)) Step {
	return Step{Name: fmt.Sprintf("replace %s by %s", old, new), Do: func(ctx context.Context, r *Run) error {
		if err := r.StopApp(old); err != nil {
			return err
		}
		_, err := r.StartAppWith(new, opt)
		return err
	}}
}

// Kill9Instance crashes a running instance.
func Kill9Instance(name string) Step {
	return Step{Name: "kill -9 " + name, Do: func(ctx context.Context, r *Run) error { return r.Kill9(name) }}
}

// PauseInstance freezes an instance for d (SIGSTOP, then SIGCONT): longer than the session
// timeout, it is fenced and must close its tasks dirty and rejoin.
func PauseInstance(name string, d time.Duration) Step {
	return Step{Name: fmt.Sprintf("pause %s for %s", name, d), Do: func(ctx context.Context, r *Run) error {
		a, err := r.App(name)
		if err != nil {
			return err
		}
		r.Tracker.Paused(name, time.Now())
		if err := a.Pause(); err != nil {
			return fmt.Errorf("pause %s: %w", name, err)
		}
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
		if err := a.Resume(); err != nil {
			return fmt.Errorf("resume %s: %w", name, err)
		}
		return nil
	}}
}

// StopInstance closes a running instance cleanly (it leaves the group).
func StopInstance(name string) Step {
	return Step{Name: "stop " + name, Do: func(ctx context.Context, r *Run) error { return r.StopApp(name) }}
}

// Run is a scenario in progress; steps act on it.
type Run struct {
	T            testing.TB
	Scenario     Scenario
	Dir          string // e2e/out/<test>
	Broker       *Broker
	AppBootstrap string // where apps connect (broker or proxy)
	Producer     *Producer
	Collector    *Collector
	Tracker      *Tracker

	mu      sync.Mutex
	apps    map[string]*App
	cleanup []func()
}

// StepReport is the timing of one step.
type StepReport struct {
	Step       string
	At         time.Time
	Instances  int           // live instances after the step
	AllRunning time.Duration // action → every task active on exactly one live instance, all RUNNING
	Balanced   time.Duration // action → also evenly spread
	OutputGap  time.Duration // longest time without any output record, from the action to the next step
	PartGap    time.Duration // longest time without output on one output partition
	DirtyClose int           // tasks closed dirty (lost) from the action to the next step
	Assignment map[string][]string
}

// Report is the result of a scenario.
type Report struct {
	Scenario  string
	Broker    string
	Protocol  string
	Guarantee string
	Steps     []StepReport
	Produced  int64
	Updates   int
	Duration  time.Duration
	Dir       string // the run's out dir (report.md, logs)
	// Problems: what went wrong in a MeasureOnly run (empty otherwise: the test failed).
	Problems []string
}

// haltRun ends a MeasureOnly run at a failure (recovered by RunScenario).
type haltRun struct{}

// RunScenario runs sc under t: start the broker, route, topics, input, output, then each step
// (fail naming the step if the group does not settle), then stop input, wait for the output,
// stop the apps, and verify. Everything lives in e2e/out/<test name>; data directories are
// removed after a pass, logs are kept either way.
func RunScenario(t testing.TB, sc Scenario) (rep *Report) {
	t.Helper()
	sc.defaults()
	dir, err := OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	r := &Run{T: t, Scenario: sc, Dir: dir, apps: map[string]*App{}}
	defer r.teardown()
	t.Logf("scenario %s: logs in %s", sc.Name, dir)
	ctx := context.Background()
	start := time.Now()
	rep = &Report{Dir: dir, Scenario: sc.Name, Broker: sc.Broker, Protocol: sc.GroupProtocol, Guarantee: sc.Guarantee}
	fatalf, errorf := t.Fatalf, t.Errorf
	measured := false // the output gaps are in rep
	if sc.MeasureOnly {
		// Registered after teardown, so it runs first: the report of a halted run is
		// written with the gaps of its measured steps before the apps stop.
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if _, ok := p.(haltRun); !ok {
				panic(p)
			}
			if !measured && r.Collector != nil {
				updates := r.Collector.Updates()
				r.measureOutput(rep, time.Now(), updates)
				rep.Updates = len(updates)
			}
			if r.Producer != nil {
				rep.Produced = r.Producer.Acked()
			}
			rep.Duration = time.Since(start)
			r.writeReport(rep)
		}()
		errorf = func(format string, args ...any) {
			rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...))
			t.Logf("measure only, recorded: "+format, args...)
		}
		fatalf = func(format string, args ...any) {
			errorf(format, args...)
			t.Logf("measure only: the run ends here")
			panic(haltRun{})
		}
	}

	r.Broker, err = StartBroker(ctx, BrokerOptions{Version: sc.Broker, Dir: filepath.Join(dir, "broker"), Overrides: sc.BrokerOverrides})
	if err != nil {
		fatalf("step setup: %v", err)
	}
	r.onCleanup(func() { _ = r.Broker.Stop() })
	r.AppBootstrap = r.Broker.Bootstrap
	if sc.Route != nil {
		if r.AppBootstrap, err = sc.Route(ctx, r); err != nil {
			fatalf("step route: %v", err)
		}
	}
	clients := r.Broker.Bootstrap
	if sc.ClientsViaRoute {
		clients = r.AppBootstrap
	}
	if err := CreateTopics(ctx, r.Broker.Bootstrap, int32(sc.Partitions), "e2e-input", "e2e-output"); err != nil {
		fatalf("step setup: %v", err)
	}
	eos := strings.HasPrefix(sc.Guarantee, "exactly_once")
	if r.Collector, err = StartCollector(clients, "e2e-output", eos); err != nil {
		fatalf("step setup: %v", err)
	}
	r.onCleanup(r.Collector.Close)
	if r.Producer, err = StartProducer(ProducerOptions{Bootstrap: clients, Topic: "e2e-input", Rate: sc.Rate, Groups: sc.Groups}); err != nil {
		fatalf("step setup: %v", err)
	}
	r.onCleanup(func() { _ = r.Producer.Stop() })
	r.Tracker = NewTracker(TopologyTasks(sc.Partitions))

	for i, st := range sc.Steps {
		name := fmt.Sprintf("%d %q", i+1, st.Name)
		at := time.Now()
		if err := st.Do(ctx, r); err != nil {
			fatalf("step %s: %v", name, err)
		}
		if st.Check {
			if err := r.appsHealthy(); err != nil {
				fatalf("step %s: %v", name, err)
			}
			rep.Steps = append(rep.Steps, StepReport{Step: st.Name, At: at, Instances: len(r.liveApps()), Assignment: r.Tracker.Assignment()})
			t.Logf("step %s: checked in %s", name, time.Since(at).Round(time.Millisecond))
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, sc.StepLimit)
		stopWatch := r.watchApps(cancel)
		settled, err := r.Tracker.WaitSettled(sctx, at, sc.Quiet)
		stopWatch()
		cancel()
		step := StepReport{
			Step: st.Name, At: at, Instances: len(r.liveApps()),
			AllRunning: settled.AllRunning.Sub(at), Balanced: settled.Balanced.Sub(at),
			Assignment: r.Tracker.Assignment(),
		}
		// A baseline keeps the times of a step that settled before an instance died.
		failedAfterSettling := func(format string, args ...any) {
			if sc.MeasureOnly && err == nil {
				rep.Steps = append(rep.Steps, step)
			}
			fatalf(format, args...)
		}
		if herr := r.appsHealthy(); herr != nil {
			failedAfterSettling("step %s: %v", name, herr)
		}
		if err != nil {
			r.dumpApps()
			fatalf("step %s: %v (after %s; logs in %s)", name, err, time.Since(at).Round(time.Second), dir)
		}
		// Hold the settled group under input; an instance dying meanwhile fails this step.
		hctx, hcancel := context.WithTimeout(ctx, sc.Hold)
		stopWatch = r.watchApps(hcancel)
		<-hctx.Done()
		stopWatch()
		hcancel()
		if err := r.appsHealthy(); err != nil {
			failedAfterSettling("step %s (hold): %v", name, err)
		}
		step.Instances, step.Assignment = len(r.liveApps()), r.Tracker.Assignment()
		rep.Steps = append(rep.Steps, step)
		t.Logf("step %s: all tasks running after %s, balanced after %s", name,
			settled.AllRunning.Sub(at).Round(time.Millisecond), settled.Balanced.Sub(at).Round(time.Millisecond))
	}

	inputDone := time.Now()
	if err := r.Producer.Stop(); err != nil {
		fatalf("step stop input: %v", err)
	}
	expected := r.Producer.Expected()
	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	err = r.Collector.WaitCaughtUp(wctx, expected)
	cancel()
	if err != nil {
		// A baseline's output that did not catch up still has its steps' gaps.
		drainf := fatalf
		if sc.MeasureOnly {
			drainf = errorf
		}
		drainf("step drain output: %v", err)
	}
	// A moment for late duplicates (at-least-once) to show up before the check.
	time.Sleep(2 * time.Second)
	updates := r.Collector.Updates()
	r.measureOutput(rep, inputDone, updates)
	measured = true
	if errs := r.Collector.Errors(); len(errs) > 0 {
		errorf("step verify: output fetch errors: %v", errs)
	}
	if err := VerifyCounts(expected, updates, eos); err != nil {
		fatalf("step verify: %v", err)
	}
	for name, a := range r.snapshotApps() {
		if a.Exited() {
			continue
		}
		if err := a.Stop(); err != nil {
			errorf("step stop %s: %v", name, err)
		}
	}
	for _, a := range r.snapshotApps() {
		if errs := a.BadLines(); len(errs) > 0 {
			errorf("app %s printed malformed events: %v", a.Name, errs)
		}
	}
	rep.Produced = r.Producer.Acked()
	rep.Updates = len(updates)
	rep.Duration = time.Since(start)
	r.writeReport(rep)
	t.Logf("scenario %s passed: %d input records, %d output updates verified (%s)\n%s",
		sc.Name, rep.Produced, rep.Updates, map[bool]string{true: "exactly once", false: "at least once"}[eos], rep.Markdown())
	return rep
}

// measureOutput fills in each step's output gaps and dirty closes, from its start to the
// next step's (the last one's to end).
func (r *Run) measureOutput(rep *Report, end time.Time, updates []Update) {
	for i := range rep.Steps {
		to := end
		if i+1 < len(rep.Steps) {
			to = rep.Steps[i+1].At
		}
		rep.Steps[i].OutputGap, rep.Steps[i].PartGap = OutputGaps(updates, rep.Steps[i].At, to)
		rep.Steps[i].DirtyClose = r.dirtyCloses(rep.Steps[i].At, to)
	}
}

func (r *Run) writeReport(rep *Report) {
	if err := os.WriteFile(filepath.Join(r.Dir, "report.md"), []byte(rep.Markdown()), 0o644); err != nil {
		r.T.Errorf("write report: %v", err)
	}
}

func (sc *Scenario) defaults() {
	if sc.Partitions == 0 {
		sc.Partitions = 4
	}
	if sc.Rate == 0 {
		sc.Rate = 100
	}
	if sc.Groups == 0 {
		sc.Groups = 20
	}
	if sc.Hold == 0 {
		sc.Hold = 15 * time.Second
		if h, err := time.ParseDuration(os.Getenv("E2E_HOLD")); err == nil {
			sc.Hold = h
		}
	}
	if sc.Quiet == 0 {
		sc.Quiet = 3 * time.Second
	}
	if sc.StepLimit == 0 {
		sc.StepLimit = 120 * time.Second
	}
	if sc.AppBuild == "" {
		sc.AppBuild = App44
	}
	if sc.GroupProtocol == "" {
		sc.GroupProtocol = "classic"
	}
	if sc.Guarantee == "" {
		sc.Guarantee = "at_least_once"
	}
}

func (r *Run) onCleanup(f func()) {
	r.mu.Lock()
	r.cleanup = append(r.cleanup, f)
	r.mu.Unlock()
}

// teardown stops everything (apps before the broker); after a pass it removes the data
// directories and keeps the logs.
func (r *Run) teardown() {
	for _, a := range r.snapshotApps() {
		_ = a.Stop()
	}
	r.mu.Lock()
	fs := r.cleanup
	r.cleanup = nil
	r.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	if !r.T.Failed() {
		_ = os.RemoveAll(filepath.Join(r.Dir, "broker", "data"))
		for _, a := range r.snapshotApps() {
			_ = os.RemoveAll(filepath.Join(a.Dir, "state"))
			_ = os.RemoveAll(filepath.Join(a.Dir, "tmp"))
		}
	}
}

// StartApp starts instance name with the scenario's settings, tracked by the run.
func (r *Run) StartApp(name string) (*App, error) { return r.StartAppWith(name, nil) }

// StartAppWith starts instance name with the scenario's settings changed by opt (may be nil).
func (r *Run) StartAppWith(name string, opt func(*AppOptions)) (*App, error) {
	sc := r.Scenario
	r.mu.Lock()
	_, exists := r.apps[name]
	r.mu.Unlock()
	if exists {
		return nil, fmt.Errorf("instance %s already started in this run", name)
	}
	commit := 0
	if strings.HasPrefix(sc.Guarantee, "exactly_once") {
		commit = 100
	}
	o := AppOptions{
		Name: name, Build: sc.AppBuild, Dir: filepath.Join(r.Dir, "app-"+name), Bootstrap: r.AppBootstrap,
		GroupProtocol: sc.GroupProtocol, Guarantee: sc.Guarantee, CommitIntervalMs: commit,
		Extra: append([]string(nil), sc.AppExtra...),
	}
	if opt != nil {
		opt(&o)
	}
	if o.GroupProtocol == "" || o.GroupProtocol == "classic" {
		// Same failure detection as the streams-group test settings (10s session). Only for
		// classic members: the streams protocol takes these from the group, not the client.
		o.Extra = append([]string{"consumer.session.timeout.ms=10000", "consumer.heartbeat.interval.ms=3000"}, o.Extra...)
	}
	o.Name, o.OnEvent = name, r.Tracker.Observe // the run tracks every instance by its name
	r.Tracker.Started(name, time.Now())
	a, err := StartApp(o)
	if err != nil {
		r.Tracker.Gone(name, time.Now())
		return nil, err
	}
	r.mu.Lock()
	r.apps[name] = a
	r.mu.Unlock()
	return a, nil
}

// App returns a started instance.
func (r *Run) App(name string) (*App, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[name]
	if !ok {
		return nil, fmt.Errorf("no instance %s", name)
	}
	return a, nil
}

// Kill9 crashes instance name.
func (r *Run) Kill9(name string) error {
	a, err := r.App(name)
	if err != nil {
		return err
	}
	r.Tracker.Gone(name, time.Now())
	a.Kill9()
	return nil
}

// StopApp closes instance name cleanly.
func (r *Run) StopApp(name string) error {
	a, err := r.App(name)
	if err != nil {
		return err
	}
	r.Tracker.Gone(name, time.Now())
	return a.Stop()
}

func (r *Run) snapshotApps() map[string]*App {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := make(map[string]*App, len(r.apps))
	for k, v := range r.apps {
		m[k] = v
	}
	return m
}

func (r *Run) liveApps() []string {
	var live []string
	for name := range r.Tracker.Assignment() {
		live = append(live, name)
	}
	sort.Strings(live)
	return live
}

// watchApps calls cancel as soon as a live instance exits on its own; the returned func
// stops watching.
func (r *Run) watchApps(cancel context.CancelFunc) (stop func()) {
	done := make(chan struct{})
	live := map[string]bool{}
	for _, n := range r.liveApps() {
		live[n] = true
	}
	for name, a := range r.snapshotApps() {
		if !live[name] {
			continue
		}
		go func(a *App) {
			select {
			case <-a.Done():
				cancel()
			case <-done:
			}
		}(a)
	}
	return func() { close(done) }
}

// appsHealthy fails when a tracked live instance died on its own or reported an error.
func (r *Run) appsHealthy() error {
	live := map[string]bool{}
	for _, n := range r.liveApps() {
		live[n] = true
	}
	for name, a := range r.snapshotApps() {
		for _, ev := range a.Events() {
			if ev.Kind == "uncaught" {
				return fmt.Errorf("instance %s: uncaught exception %s (see %s)", name, ev.Error, a.Log)
			}
		}
		if live[name] && a.Exited() {
			return fmt.Errorf("instance %s exited on its own (%s; see %s)", name, a.lastWords(), a.Log)
		}
	}
	return nil
}

func (r *Run) dumpApps() {
	for name, tasks := range r.Tracker.Assignment() {
		r.T.Logf("instance %s active tasks: %v", name, tasks)
	}
}

// dirtyCloses counts tasks closed dirty by any instance in [from, to).
func (r *Run) dirtyCloses(from, to time.Time) int {
	n := 0
	for _, a := range r.snapshotApps() {
		for _, ev := range a.Events() {
			if ev.Kind == "task_closed" && !ev.Clean && !ev.Time.Before(from) && ev.Time.Before(to) {
				n++
			}
		}
	}
	return n
}
