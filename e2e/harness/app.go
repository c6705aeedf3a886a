package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// App builds the e2e build provides (e2e/app-<build>): the same source against two clients.
const (
	App44 = "4.4" // kafka-streams 4.4.0: group.protocol classic or streams
	App39 = "3.9" // kafka-streams 3.9.x: classic only
)

// AppOptions configure StartApp. Fields map to e2e.CountApp arguments.
type AppOptions struct {
	Name      string // instance name (app.instance), also the events' App
	Build     string // App44 or App39
	Dir       string // run dir (state/, tmp/, app.out, app.log); must not exist or be empty
	Bootstrap string // bootstrap.servers: the broker, or a proxy in front of it

	ApplicationID     string // default "e2e-count"
	GroupProtocol     string // "classic" (default) or "streams"
	Guarantee         string // processing.guarantee: "at_least_once" (default) or "exactly_once_v2"
	ApplicationServer string // application.server, e.g. "127.0.0.1:7001"
	Standbys          int    // num.standby.replicas (classic only; streams groups use a group config)
	CommitIntervalMs  int    // commit.interval.ms (0: the app's default, 1000; EOS runs use 100)
	Input, Output     string // topics (default e2e-input / e2e-output)
	Store             string // "memory" (default) or "rocksdb"
	// Extra are more key=value arguments: Streams configs, or app.* keys.
	Extra []string
	// Main runs another class of the app jar (e2e.ClientCheck, e2e.Ready) instead of CountApp.
	Main string
	// OnEvent, when set, is called for every event in order, on the app's reader goroutine.
	OnEvent func(Event)
}

// App is a running test-app JVM.
type App struct {
	Name string
	Dir  string
	Out  string // stdout (EVT lines and anything else the app prints)
	Log  string // stderr (Kafka's log)

	p       *proc
	mu      sync.Mutex
	events  []Event
	changed chan struct{} // closed and replaced on every event
	bad     []error
}

// StartApp starts one app instance through e2e/bin/app.sh run.
func StartApp(o AppOptions) (*App, error) {
	if o.Build == "" {
		o.Build = App44
	}
	if o.Build != App44 && o.Build != App39 {
		return nil, fmt.Errorf("app build %q: want %s or %s", o.Build, App44, App39)
	}
	if o.GroupProtocol == "streams" && o.Build == App39 {
		return nil, fmt.Errorf("app %s: kafka-streams 3.9 has no streams group protocol", o.Name)
	}
	if err := CheckBuilt("app-" + o.Build); err != nil {
		return nil, err
	}
	if o.Name == "" || o.Dir == "" || (o.Bootstrap == "" && o.Main == "") {
		return nil, fmt.Errorf("app: Name, Dir and Bootstrap are required")
	}
	if entries, err := os.ReadDir(o.Dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("app dir %s is not empty", o.Dir)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("app dir: %w", err)
	}
	a := &App{
		Name: o.Name, Dir: o.Dir,
		Out:     filepath.Join(o.Dir, "app.out"),
		Log:     filepath.Join(o.Dir, "app.log"),
		changed: make(chan struct{}),
	}
	record := func(ev Event, ok bool, err error) {
		if !ok {
			return
		}
		a.mu.Lock()
		if err != nil {
			a.bad = append(a.bad, err)
		} else {
			a.events = append(a.events, ev)
		}
		close(a.changed)
		a.changed = make(chan struct{})
		a.mu.Unlock()
		if err == nil && o.OnEvent != nil {
			o.OnEvent(ev)
		}
	}
	onLine := func(line string) { record(ParseEvent(o.Name, line)) }
	onErrLine := func(line string) {
		if ev, ok := parseLogEvent(o.Name, line, time.Now()); ok {
			record(ev, true, nil)
		}
	}
	args := append([]string{"run", o.Build, o.Dir}, o.args()...)
	var env []string
	if o.Main != "" {
		env = append(env, "E2E_APP_MAIN="+o.Main)
	}
	var err error
	a.p, err = startProc("app "+o.Name, a.Out, a.Log, onLine, onErrLine, env, filepath.Join(Root(), "bin", "app.sh"), args...)
	if err != nil {
		return nil, err
	}
	return a, nil
}

func (o AppOptions) args() []string {
	var args appArgs
	if o.Main != "" {
		args.add("bootstrap.servers", o.Bootstrap)
		return append(args, o.Extra...)
	}
	args.add("app.instance", o.Name)
	args.add("bootstrap.servers", o.Bootstrap)
	args.add("application.id", o.ApplicationID)
	args.add("group.protocol", o.GroupProtocol)
	args.add("processing.guarantee", o.Guarantee)
	args.add("application.server", o.ApplicationServer)
	args.addCount("num.standby.replicas", o.Standbys)
	args.addCount("commit.interval.ms", o.CommitIntervalMs)
	args.add("app.input", o.Input)
	args.add("app.output", o.Output)
	args.add("app.store", o.Store)
	return append(args, o.Extra...)
}

// appArgs are the key=value arguments of an app's main. What is unset (an empty value, a
// count of zero) is left out, so the app's own default applies.
type appArgs []string

func (a *appArgs) add(k, v string) {
	if v != "" {
		*a = append(*a, k+"="+v)
	}
}

func (a *appArgs) addCount(k string, n int) {
	if n > 0 {
		a.add(k, fmt.Sprint(n))
	}
}

// PID is the app JVM's process id.
func (a *App) PID() int { return a.p.pid() }

// Exited reports whether the JVM has ended.
func (a *App) Exited() bool { return a.p.exited() }

// Done is closed when the JVM has ended.
func (a *App) Done() <-chan struct{} { return a.p.done }

// Stop closes the app cleanly (TERM runs KafkaStreams.close), KILL after 40s.
func (a *App) Stop() error { return a.p.stop(40 * time.Second) }

// Kill9 crashes the app: no close, no LeaveGroup, no commit.
func (a *App) Kill9() { a.p.kill9() }

// Pause freezes the JVM (SIGSTOP): no heartbeats, no processing, sockets stay open.
func (a *App) Pause() error { return a.p.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused JVM (SIGCONT).
func (a *App) Resume() error { return a.p.cmd.Process.Signal(syscall.SIGCONT) }

// Wait blocks until the JVM ends and returns its exit error.
func (a *App) Wait(ctx context.Context) error {
	select {
	case <-a.p.done:
		return a.p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Events returns a copy of all events so far.
func (a *App) Events() []Event {
	return copyLocked(&a.mu, &a.events)
}

// BadLines returns the errors of event lines that did not parse.
func (a *App) BadLines() []error {
	return copyLocked(&a.mu, &a.bad)
}

// WaitEvent waits for the first event (from the start) that matches.
func (a *App) WaitEvent(ctx context.Context, match func(Event) bool) (Event, error) {
	seen := 0
	for {
		a.mu.Lock()
		evs := a.events[seen:]
		ch := a.changed
		a.mu.Unlock()
		for _, ev := range evs {
			if match(ev) {
				return ev, nil
			}
		}
		seen += len(evs)
		select {
		case <-ch:
		case <-a.p.done:
			// Drain what arrived with the exit, then give up.
			a.mu.Lock()
			rest := a.events[seen:]
			a.mu.Unlock()
			for _, ev := range rest {
				if match(ev) {
					return ev, nil
				}
			}
			return Event{}, fmt.Errorf("app %s exited (%v) before the awaited event (see %s, %s)", a.Name, a.p.err, a.Out, a.Log)
		case <-ctx.Done():
			return Event{}, fmt.Errorf("app %s: %w waiting for an event (see %s)", a.Name, ctx.Err(), a.Out)
		}
	}
}

// lastWords summarises why an app ended: its last state and the first ERROR of its log.
func (a *App) lastWords() string {
	state := "no state reported"
	for _, ev := range a.Events() {
		if ev.Kind == "state" {
			state = "last state " + ev.To
		}
	}
	if b, err := os.ReadFile(a.Log); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "] ERROR ") {
				if len(line) > 400 {
					line = line[:400] + "..."
				}
				return state + "; first error: " + line
			}
		}
	}
	return state
}

// LastTasks returns the app's latest reported active and standby tasks.
func (a *App) LastTasks() (active, standby []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.events) - 1; i >= 0; i-- {
		if a.events[i].Kind == "tasks" {
			return a.events[i].Active, a.events[i].Standby
		}
	}
	return nil, nil
}

// TopologyTasks is the task set of CountApp on an input topic with n partitions: subtopology 0
// (input → repartition) and 1 (repartition → count → output), n tasks each.
func TopologyTasks(n int) []string {
	var ts []string
	for sub := 0; sub < 2; sub++ {
		for p := 0; p < n; p++ {
			ts = append(ts, fmt.Sprintf("%d_%d", sub, p))
		}
	}
	sort.Strings(ts)
	return ts
}
