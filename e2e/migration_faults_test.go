//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/e2e/faultproxy"
	"github.com/streamshift/streamshift/e2e/harness"
)

// The API keys the faults act on.
const (
	keyListOffsets     int16 = 2
	keyMetadata        int16 = 3
	keyOffsetCommit    int16 = 8
	keyOffsetFetch     int16 = 9
	keyFindCoordinator int16 = 10
	keyJoinGroup       int16 = 11
	keyHeartbeat       int16 = 12
	keySyncGroup       int16 = 14
	keyEndTxn          int16 = 26
	keyTxnOffsetCommit int16 = 28
)

// faultRun is one online migration under faults: a fault proxy between
// streamshift and the broker (broker), one between the apps and streamshift
// (apps), and what the run saw.
type faultRun struct {
	broker, apps *faultproxy.Proxy
	dir          string

	mu sync.Mutex
	// ends: when each instance stopped, or stopped counting (a blackholed
	// one: from then on it is a zombie Kafka fences, not an owner).
	ends     map[string]time.Time
	names    []string
	states   map[string]string // instance -> its state directory
	zombie   string            // the blackholed instance ("" if none)
	zombieAt time.Time
	lost     []string  // the zombie's active tasks when blackholed
	afterAt  time.Time // the step after the blackhole's starts
	hits     map[string]int64
	// skip: instances whose own logs are not checked (the blackholed one).
	skip map[string]bool
	// cluster, relays: a run of three instances (faultCase.cluster), each
	// advertising to the others a relay in front of its internal listener.
	cluster *ssCluster
	relays  [3]*faultproxy.Relay
}

// fault is one fault switched on at a phase of the migration. on switches
// it on; a fault with a window of its own (10 s, 20 s) switches itself off
// at the window's end before on returns nil; one without (a blackhole)
// returns what switches it off.
type fault struct {
	name string
	on   func(ctx context.Context, f *faultRun) (off func())
}

// faultCase is one migration run: a fault at the takeover, one at the
// hand-back.
type faultCase struct {
	name               string
	takeover, handBack fault
	// blackholed: the takeover's fault makes c2 a zombie: the next roll
	// kills it and starts its successor on a fresh state directory.
	blackholed bool
	// cluster: three streamshift instances (startLinkedCluster) instead of
	// one behind the app-side fault proxy.
	cluster bool
}

// coordinatorMoving: the broker answers COORDINATOR_NOT_AVAILABLE, then
// NOT_COORDINATOR, to the group's JoinGroup, SyncGroup, Heartbeat and
// OffsetCommit for 10 s (its coordinator moving), whoever sends them: the
// apps' forwarded requests and streamshift's own (the anchor).
func coordinatorMoving() fault {
	return fault{name: "coordinator moving: COORDINATOR_NOT_AVAILABLE 5 s, then NOT_COORDINATOR 5 s (JoinGroup, SyncGroup, Heartbeat, OffsetCommit of the group)", on: func(ctx context.Context, f *faultRun) func() {
		keys := []int16{keyJoinGroup, keySyncGroup, keyHeartbeat, keyOffsetCommit}
		m := faultproxy.Match{Group: "e2e-count"}
		var rules []*faultproxy.Rule
		for _, k := range keys {
			rules = append(rules, f.broker.InjectError(k, kerr.CoordinatorNotAvailable.Code, m))
		}
		sleep(ctx, 5*time.Second)
		for _, k := range keys {
			rules = append(rules, f.broker.InjectError(k, kerr.NotCoordinator.Code, m))
		}
		for _, r := range rules[:len(keys)] {
			r.Off()
		}
		sleep(ctx, 5*time.Second)
		f.off("coordinator moving", rules)
		return nil
	}}
}

// commitGap: an instance's next two TxnOffsetCommits and two EndTxns reach
// the broker and their answers never come back: its connection closes
// instead (Kafka's exactly-once commit gap). Between the app and
// streamshift, so only that instance's connections close.
func commitGap(instance string) fault {
	return fault{name: "commit gap of " + instance + ": the connection closed after 2 TxnOffsetCommits and 2 EndTxns reached the broker", on: func(ctx context.Context, f *faultRun) func() {
		m := faultproxy.Match{ClientID: clientID(instance) + "-", Times: 2}
		rules := []*faultproxy.Rule{f.apps.DisconnectAfter(keyTxnOffsetCommit, m), f.apps.DisconnectAfter(keyEndTxn, m)}
		sleep(ctx, 20*time.Second)
		f.off("commit gap", rules)
		return nil
	}}
}

// slowBroker: a 2 s delay on every FindCoordinator, OffsetFetch,
// ListOffsets and Metadata answer from the broker, for 20 s.
func slowBroker() fault {
	return fault{name: "slow broker: 2 s on FindCoordinator, OffsetFetch, ListOffsets, Metadata for 20 s", on: func(ctx context.Context, f *faultRun) func() {
		var rules []*faultproxy.Rule
		for _, k := range []int16{keyFindCoordinator, keyOffsetFetch, keyListOffsets, keyMetadata} {
			rules = append(rules, f.broker.DelayOn(k, 2*time.Second, faultproxy.Match{}))
		}
		sleep(ctx, 20*time.Second)
		f.off("slow broker", rules)
		return nil
	}}
}

// blackholed: c2's requests are swallowed from the takeover's start on,
// its connections kept: streamshift must fence it by its session and give
// its tasks to the others, once. It stays blackholed (a zombie) until the
// next roll kills it.
func blackholed(r *harness.Run) fault {
	return fault{name: "c2 blackholed mid-takeover (requests swallowed, connections kept)", on: func(ctx context.Context, f *faultRun) func() {
		rule := f.apps.BlackholeClient(clientID("c2") + "-")
		now := time.Now()
		a, err := r.App("c2")
		if err == nil {
			f.mu.Lock()
			f.zombie, f.zombieAt, f.ends["c2"] = "c2", now, now
			f.lost, _ = a.LastTasks()
			f.skip["c2"] = true
			f.mu.Unlock()
		}
		// From now on c2 is not an owner: its tasks must move.
		r.Tracker.Gone("c2", now)
		return func() { f.off("blackhole", []*faultproxy.Rule{rule}) }
	}}
}

func (f *faultRun) off(name string, rules []*faultproxy.Rule) {
	var n int64
	for _, r := range rules {
		r.Off()
		n += r.Hits()
	}
	f.mu.Lock()
	f.hits[name] += n
	f.mu.Unlock()
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// clientID is an instance's client.id: Kafka Streams prefixes its clients'
// ids with it ("e2e-count-c2-StreamThread-1-producer"), so a fault can pick
// one instance's connections.
func clientID(instance string) string { return "e2e-count-" + instance }

// faultLog opens the file the fault proxies log to (what each fault acted
// on, with the time): one Logf per proxy, named by side.
func faultLog(t testing.TB, path string) (func(side string) func(string, ...any), error) {
	fh, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		fh.Close()
	})
	return func(side string) func(string, ...any) {
		return func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(fh, "%s %s: %s\n", time.Now().Format("15:04:05.000"), side, fmt.Sprintf(format, args...))
		}
	}, nil
}

// waitRebalancing waits for instance name, started meanwhile, to report
// its first REBALANCING state (KafkaStreams.start: its threads are about
// to join).
func waitRebalancing(ctx context.Context, r *harness.Run, name string) error {
	for {
		if a, err := r.App(name); err == nil {
			_, err := a.WaitEvent(ctx, func(ev harness.Event) bool { return ev.Kind == "state" && ev.To == "REBALANCING" })
			return err
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return fmt.Errorf("%s never started: %w", name, ctx.Err())
		}
	}
}

// TestStreamsProxyMigrationFaults: the online migration (classic → streams
// → classic, EOS, continuous input, two instances on 4.4 and 3.6, each
// successor on its predecessor's state directory) under Kafka's fault
// primitives (issue #41), one fault at the takeover and one at the
// hand-back per run, three runs in parallel (a fourth, the coordinator
// moving at the takeover, is a known failure: docs/faults.md). The
// takeover's fault is switched on as the first streams instance starts its
// threads, the hand-back's as the last streams instance is stopped. Each run asserts exact output
// (the harness's verification: no loss, no duplicate), no task closed dirty
// and no member fenced (from the apps' logs), no task active on two
// instances at once (from their events), the group handed back to the
// broker; a blackholed instance's tasks move once. The longest
// per-partition output gap and the time back to a settled group of each
// faulted roll go to e2e/out/TestStreamsProxyMigrationFaults/faults.md.
func TestStreamsProxyMigrationFaults(t *testing.T) {
	if os.Getenv("STREAMSHIFT_E2E_FAULTS") == "0" {
		// Five JVM-heavy migrations, about 10 min of two cores, part of
		// make test; STREAMSHIFT_E2E_FAULTS=0 leaves them out of a
		// local run (docs/faults.md).
		t.Skip("STREAMSHIFT_E2E_FAULTS=0: the fault runs are left out")
	}
	t.Parallel()
	top, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var rows []string
	t.Cleanup(func() {
		sort.Strings(rows)
		var sb strings.Builder
		fmt.Fprintf(&sb, "# %s\n\nOne online migration (classic → streams → classic, EOS, continuous input) per run; the roll under the fault, from the stop of the instance rolled.\n\n", t.Name())
		sb.WriteString("| run | phase | fault | faults acted on | longest per-partition output gap | longest output gap | all tasks running after | settled (balanced) after |\n|---|---|---|---|---|---|---|---|\n")
		for _, r := range rows {
			sb.WriteString(r)
		}
		if err := os.WriteFile(filepath.Join(top, "faults.md"), []byte(sb.String()), 0o644); err != nil {
			t.Error(err)
		}
	})
	cases := []func(r *harness.Run) faultCase{
		func(*harness.Run) faultCase {
			return faultCase{name: "commit-gap-then-slow", takeover: commitGap("c2"), handBack: slowBroker()}
		},
		func(*harness.Run) faultCase {
			return faultCase{name: "slow-then-coordinator", takeover: slowBroker(), handBack: coordinatorMoving()}
		},
		func(r *harness.Run) faultCase {
			return faultCase{name: "blackhole-then-commit-gap", takeover: blackholed(r), handBack: commitGap("c3"), blackholed: true}
		},
		func(*harness.Run) faultCase {
			return faultCase{name: "coordinator-at-takeover", takeover: coordinatorMoving(), handBack: fault{name: "none", on: func(context.Context, *faultRun) func() { return nil }}}
		},
		func(*harness.Run) faultCase {
			return faultCase{name: "link-at-takeover", takeover: linkDropped(), handBack: fault{name: "none", on: func(context.Context, *faultRun) func() { return nil }}, cluster: true}
		},
	}
	names := []string{"commit-gap-then-slow", "slow-then-coordinator", "blackhole-then-commit-gap", "coordinator-at-takeover", "link-at-takeover"}
	for i, mk := range cases {
		t.Run(names[i], func(t *testing.T) {
			t.Parallel()
			got := runMigrationUnderFaults(t, mk)
			mu.Lock()
			rows = append(rows, got...)
			mu.Unlock()
		})
	}
}

// both is two faults at once.
func both(a, b fault) fault {
	return fault{name: a.name + " + " + b.name, on: func(ctx context.Context, f *faultRun) func() {
		var offB func()
		done := make(chan struct{})
		go func() { defer close(done); offB = b.on(ctx, f) }()
		offA := a.on(ctx, f)
		<-done
		return func() {
			for _, off := range []func(){offA, offB} {
				if off != nil {
					off()
				}
			}
		}
	}}
}

// runMigrationUnderFaults runs one case; it returns its rows of the table.
func runMigrationUnderFaults(t *testing.T, mk func(r *harness.Run) faultCase) []string {
	f := &faultRun{ends: map[string]time.Time{}, states: map[string]string{}, hits: map[string]int64{}, skip: map[string]bool{}}
	var fc faultCase
	// Each fault runs on its own goroutine from its trigger; its off waits
	// for the roll it faults to settle.
	var wg sync.WaitGroup
	// A run that fails mid-way still waits for its faults' windows to end
	// before the test is over (they log).
	t.Cleanup(wg.Wait)
	offs := make(chan func(), 2)
	arm := func(ctx context.Context, ft fault, trigger func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := trigger(ctx); err != nil {
				t.Errorf("fault %q never switched on: %v", ft.name, err)
				offs <- func() {}
				return
			}
			t.Logf("fault on: %s", ft.name)
			offs <- ft.on(ctx, f)
		}()
	}
	// switchOff ends the armed fault (after its window) and logs its hits.
	switchOff := func() {
		if off := <-offs; off != nil {
			off()
		}
	}
	start := func(name, build string) harness.Step {
		return harness.Step{Name: fmt.Sprintf("start %s (%s, classic)", name, build), Do: func(ctx context.Context, r *harness.Run) error {
			f.mu.Lock()
			f.names = append(f.names, name)
			f.mu.Unlock()
			_, err := r.StartAppWith(name, func(o *harness.AppOptions) {
				o.Build, o.GroupProtocol = build, "classic"
				o.Extra = append(o.Extra, "client.id="+clientID(name))
			})
			return err
		}}
	}
	// roll stops old (kill -9 if it is the zombie) and starts name on
	// protocol, on old's state directory (a fresh one after a zombie: its
	// state was not closed), with before/after hooks around it.
	roll := func(old, name, protocol string, before func(ctx context.Context, r *harness.Run)) harness.Step {
		return harness.Step{Name: fmt.Sprintf("roll %s to 4.4 %s as %s", old, protocol, name), Do: func(ctx context.Context, r *harness.Run) error {
			if before != nil {
				before(ctx, r)
			}
			a, err := r.App(old)
			if err != nil {
				return err
			}
			f.mu.Lock()
			zombie := f.zombie == old
			f.mu.Unlock()
			if zombie {
				f.mu.Lock()
				f.afterAt = time.Now()
				f.mu.Unlock()
				if err := r.Kill9(old); err != nil {
					return err
				}
				switchOff() // the blackhole: nothing of c2 is left to swallow
			} else if err := r.StopApp(old); err != nil {
				return err
			}
			f.mu.Lock()
			if _, ok := f.ends[old]; !ok {
				f.ends[old] = time.Now()
			}
			f.names = append(f.names, name)
			state := f.states[old]
			if state == "" {
				state = filepath.Join(a.Dir, "state")
			}
			if zombie {
				state = filepath.Join(r.Dir, "state-"+name)
			}
			f.states[name] = state
			f.mu.Unlock()
			_, err = r.StartAppWith(name, func(o *harness.AppOptions) {
				o.Build, o.GroupProtocol = harness.App44, protocol
				o.Extra = append(o.Extra, "state.dir="+state, "client.id="+clientID(name))
			})
			return err
		}}
	}
	rep := harness.RunScenario(t, harness.Scenario{
		Name:          "online migration classic → streams → classic through streamshift on 3.9, under faults",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App44,
		GroupProtocol: "classic",
		Guarantee:     "exactly_once_v2",
		AppExtra:      rollAppExtra,
		Hold:          10 * time.Second,
		Route: func(ctx context.Context, r *harness.Run) (string, error) {
			fc = mk(r)
			f.dir = r.Dir
			logf, err := faultLog(r.T, filepath.Join(r.Dir, "faultproxy.log"))
			if err != nil {
				return "", err
			}
			if fc.cluster {
				return f.startLinkedCluster(ctx, r, logf("links"))
			}
			if f.broker, err = faultproxy.Start(r.Broker.Bootstrap); err != nil {
				return "", err
			}
			f.broker.Logf = logf("broker side")
			r.T.Cleanup(func() { f.broker.Close() })
			ports, err := harness.FreePorts(1)
			if err != nil {
				return "", err
			}
			// The disconnect expiry off, as in TestStreamsProxyOnlineMigration:
			// a successor's JVM start on a loaded machine outlasts it. A
			// blackholed instance keeps its connections anyway: only its
			// session can end it.
			env := append(slices.Clone(nativeTestSettings), "STREAMSHIFT_ADMIN_LISTEN=127.0.0.1:"+strconv.Itoa(ports[0]),
				"STREAMSHIFT_MIGRATION_DISCONNECT_EXPIRY_HEARTBEATS=0")
			addr, stop := startStreamshift(ctx, r.T, r.Dir, f.broker.Addr(), "faults", env...)
			r.T.Cleanup(stop)
			if f.apps, err = faultproxy.Start(addr); err != nil {
				return "", err
			}
			f.apps.Logf = logf("app side")
			r.T.Cleanup(func() { f.apps.Close() })
			return f.apps.Addr(), nil
		},
		Steps: []harness.Step{
			start("c1", harness.App44),
			start("c2", harness.App36),
			// The takeover: its fault switches on as s1 starts its stream
			// threads (KafkaStreams.start, state REBALANCING), a moment before
			// its first heartbeat starts the takeover, so the fault covers the
			// takeover's own requests upstream (its metadata refresh, the
			// anchor's FindCoordinator and JoinGroup).
			roll("c1", "s1", "streams", func(ctx context.Context, r *harness.Run) {
				arm(ctx, fc.takeover, func(ctx context.Context) error {
					if fc.cluster {
						// Mid-takeover: the owner has started it (the apps'
						// requests reach it only through the links).
						return f.takeoverStarted(ctx)
					}
					return waitRebalancing(ctx, r, "s1")
				})
			}),
			{Name: "the takeover's fault off", Check: true, Do: func(ctx context.Context, r *harness.Run) error {
				if !fc.blackholed {
					switchOff()
				}
				return nil
			}},
			roll("c2", "s2", "streams", nil),
			roll("s1", "c3", "classic", nil),
			// The hand-back: s2 is the last streams instance; its fault
			// switches on as it is stopped.
			roll("s2", "c4", "classic", func(ctx context.Context, r *harness.Run) {
				arm(ctx, fc.handBack, func(context.Context) error { return nil })
			}),
			{Name: "the hand-back's fault off", Check: true, Do: func(ctx context.Context, r *harness.Run) error {
				switchOff()
				return nil
			}},
			{Name: "no task active on two instances, none closed dirty, no member fenced", Check: true, Do: func(ctx context.Context, r *harness.Run) error {
				return f.check(r)
			}},
			{Name: "handed back: the upstream classic group holds the apps, no anchor", Check: true, Do: func(ctx context.Context, r *harness.Run) error {
				return checkHandedBack(ctx, r.Broker.Bootstrap, "e2e-count", 2)
			}},
		},
	})
	wg.Wait()
	for i, s := range rep.Steps {
		// The zombie's own dirty closes (if it logged any before its kill)
		// are Kafka fencing it, not the migration.
		if s.DirtyClose != 0 && !(fc.blackholed && strings.Contains(s.Step, "c2")) {
			t.Errorf("step %d (%s): %d tasks closed dirty", i+1, s.Step, s.DirtyClose)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var rows []string
	for _, p := range []struct {
		phase, step string
		ft          fault
	}{
		{"takeover", "roll c1 to 4.4 streams as s1", fc.takeover},
		{"hand-back", "roll s2 to 4.4 classic as c4", fc.handBack},
		// The same run's roll without a fault, to read the others against:
		// on a loaded machine most of a roll's gap is its successor's JVM
		// start.
		{"no fault (s1 → c3)", "roll s1 to 4.4 classic as c3", fault{name: "none"}},
	} {
		for _, s := range rep.Steps {
			if s.Step != p.step {
				continue
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %.1f s | %.1f s | %.1f s | %.1f s |\n", fc.name, p.phase, p.ft.name, f.hitsText(p.ft.name),
				s.PartGap.Seconds(), s.OutputGap.Seconds(), s.AllRunning.Seconds(), s.Balanced.Seconds()))
			t.Logf("%s at the %s: longest partition gap %s, all running after %s, balanced after %s", p.ft.name, p.phase,
				s.PartGap.Round(time.Millisecond), s.AllRunning.Round(time.Millisecond), s.Balanced.Round(time.Millisecond))
		}
	}
	for name, n := range f.hits {
		if n == 0 {
			t.Errorf("fault %q never acted on a request: the run did not test it", name)
		}
	}
	return rows
}

// hitsText is how many requests each fault named in title acted on.
func (f *faultRun) hitsText(title string) string {
	var parts []string
	for name, n := range f.hits {
		if strings.Contains(title, name) {
			parts = append(parts, fmt.Sprintf("%s %d", name, n))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// check: the apps' logs show no task closed dirty, no task migrated or
// lost, no member fenced (the blackholed zombie's own log excepted: it is
// the one fenced); no task was active on two instances at once (a zombie
// counts from the blackhole on as ended: Kafka's fencing, not the group,
// keeps it out, and the exact output shows it did); a zombie's tasks became
// active elsewhere once each before the next roll.
func (f *faultRun) check(r *harness.Run) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	bad := []string{"Closed dirty", "TaskMigratedException", "as lost", "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "Unknown member", "Illegal generation"}
	var events []harness.Event
	for _, name := range f.names {
		a, err := r.App(name)
		if err != nil {
			return err
		}
		events = append(events, a.Events()...)
		if f.skip[name] {
			continue
		}
		b, err := os.ReadFile(a.Log)
		if err != nil {
			return err
		}
		corrupted := corruptedTasks(string(b))
		for _, line := range strings.Split(string(b), "\n") {
			for _, w := range bad {
				if strings.Contains(line, w) && !(w == "Closed dirty" && corrupted[dirtyTask(line)]) {
					return fmt.Errorf("%s: %q in %s", a.Log, w, line)
				}
			}
		}
	}
	for _, o := range harness.ActiveOverlaps(events, f.ends, time.Now()) {
		if o.Dur > 500*time.Millisecond {
			return fmt.Errorf("%s", o)
		}
	}
	if f.zombie == "" {
		return nil
	}
	if len(f.lost) == 0 {
		return fmt.Errorf("%s had no active task when blackholed", f.zombie)
	}
	// Each of the zombie's tasks: how many times it became active on another
	// instance between the blackhole and the next roll.
	sort.Slice(events, func(i, j int) bool { return events[i].Time.Before(events[j].Time) })
	moves := map[string]int{}
	prev := map[string][]string{}
	for _, ev := range events {
		if ev.Kind != "tasks" || ev.App == f.zombie {
			continue
		}
		if ev.Time.After(f.zombieAt) && ev.Time.Before(f.afterAt) {
			for _, task := range ev.Active {
				if !slices.Contains(prev[ev.App], task) {
					moves[task]++
				}
			}
		}
		prev[ev.App] = ev.Active
	}
	for _, task := range f.lost {
		if moves[task] != 1 {
			return fmt.Errorf("task %s of the blackholed %s became active elsewhere %d times before the next roll, want once", task, f.zombie, moves[task])
		}
	}
	r.T.Logf("the blackholed %s's tasks %v moved once each", f.zombie, f.lost)
	return nil
}

// linkDropped: the links of the other instances into the group's owner
// dropped for 10 s (their connections cut, new ones refused): requests the
// apps send to the other instances cannot reach the owner; the owner goes
// on with the takeover and the upstream.
func linkDropped() fault {
	const name = "links into the owner dropped for 10 s"
	return fault{name: name, on: func(ctx context.Context, f *faultRun) func() {
		owner, err := f.cluster.owner(ctx, 0, "e2e-count")
		if err != nil {
			return nil // no hits: the run fails, saying the fault acted on nothing
		}
		rl := f.relays[owner]
		before := rl.Refused()
		rl.Drop(10 * time.Second)
		sleep(ctx, 10*time.Second)
		f.mu.Lock()
		f.hits[name] += rl.Refused() - before
		f.mu.Unlock()
		return nil
	}}
}

// startLinkedCluster starts three instances sharing the group log (as
// startSSCluster), each advertising to the others a relay in front of its
// internal listener, so linkDropped can cut the links into one. The apps
// bootstrap from the two instances that do not own the group: every
// request of theirs for it crosses a link to the owner. The streams
// sessions are 30 s here (Kafka's default is 45 s): a member cut from its
// coordinator longer than its session is fenced on Kafka too.
func (f *faultRun) startLinkedCluster(ctx context.Context, r *harness.Run, logf func(string, ...any)) (string, error) {
	env := append(slices.Clone(nativeTestSettings), "STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS=30000",
		"STREAMSHIFT_MIGRATION_DISCONNECT_EXPIRY_HEARTBEATS=0", "STREAMSHIFT_LOG_LEVEL=info")
	c, err := startSSClusterWith(ctx, r.T, r.Dir, r.Broker.Bootstrap, "", nil, func(i int, host, clusterListen string) ([]string, error) {
		rl, err := faultproxy.StartRelay(host, clusterListen)
		if err != nil {
			return nil, err
		}
		rl.Logf = logf
		r.T.Cleanup(func() { rl.Close() })
		f.relays[i] = rl
		return []string{"STREAMSHIFT_CLUSTER_ADVERTISED_ADDRESS=" + rl.Addr()}, nil
	}, env...)
	if err != nil {
		return "", err
	}
	f.cluster = c
	owner, err := c.owner(ctx, 0, "e2e-count")
	if err != nil {
		return "", err
	}
	var boot []string
	for i, h := range c.hosts {
		if i != owner {
			boot = append(boot, net.JoinHostPort(h, strconv.Itoa(c.port)))
		}
	}
	r.T.Logf("e2e-count's owner is s%d; the apps bootstrap from %v", owner+1, boot)
	return strings.Join(boot, ","), nil
}

// takeoverStarted waits until the group's owner logs that its takeover
// started.
func (f *faultRun) takeoverStarted(ctx context.Context) error {
	owner, err := f.cluster.owner(ctx, 0, "e2e-count")
	if err != nil {
		return err
	}
	return waitLogLine(ctx, filepath.Join(f.dir, fmt.Sprintf("streamshift-s%d", owner+1), "streamshift-1.log"), "takeover of a live classic group starts")
}
