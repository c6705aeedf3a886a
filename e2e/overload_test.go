//go:build e2e

package e2e_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
	"github.com/streamshift/streamshift/internal/testpki"
)

// The overload test (issue #26): streamshift stays up, and its memory
// bounded, under the attacks the reporter ran, scaled to a 2-core
// machine, while good clients run throughout.
const (
	// overloadNoFile is the descriptor limit streamshift runs under: the
	// connection flood reaches it with ~2-3k connects instead of 10k.
	overloadNoFile = 2048
	// overloadBudget is limits.max-buffered-bytes in this test: every request
	// and response byte held across connections.
	overloadBudget = 64 << 20
	// overloadIdleRSS is the proxy's idle size: with the good clients
	// running it measured 24-25 MiB (2026-12-02, 2-core machine; the test
	// logs it as "base RSS"), rounded up for the state of the ~1,000
	// connections an attack holds (a flood of 965 peaked at 28 MiB).
	overloadIdleRSS = 32 << 20
	// overloadRSSLimit is what the README promises under overload: the idle
	// size plus twice max-buffered-bytes (the buffered bytes, and the
	// garbage Go's collector lets grow to the live heap's size before it
	// runs). A peak above it fails.
	overloadRSSLimit = overloadIdleRSS + 2*overloadBudget
	// overloadKillRSS: a proxy above it is killed (the machine is shared).
	overloadKillRSS = 3 << 30
	// overloadPerIP is limits.max-connections-per-ip in this test.
	overloadPerIP = 200
	// overloadRequestTimeout and overloadIdle are limits.request-timeout and
	// limits.connections-max-idle here; the checks allow 25 s more.
	overloadRequestTimeout = 5 * time.Second
	overloadIdle           = 15 * time.Second
	overloadHandshake      = 3 * time.Second  // tls.handshake-timeout
	overloadGroupExpiry    = 10 * time.Second // coordinator.offsets-retention-check-interval
	overloadSlack          = 25 * time.Second
)

// overloadEnv are the limits both proxies run with. The new keys are set by
// environment, not a YAML file: unknown STREAMSHIFT_ variables are only
// warned about, so the same test runs on a build without them (the
// "before" numbers). limits.max-connections stays 0: derived from the
// descriptor limit.
var overloadEnv = []string{
	fmt.Sprintf("STREAMSHIFT_LIMITS_MAX_BUFFERED_BYTES=%d", overloadBudget),
	fmt.Sprintf("STREAMSHIFT_LIMITS_MAX_CONNECTIONS_PER_IP=%d", overloadPerIP),
	"STREAMSHIFT_LIMITS_MAX_CONNECTIONS=0",
	"STREAMSHIFT_LIMITS_REQUEST_TIMEOUT=" + overloadRequestTimeout.String(),
	"STREAMSHIFT_LIMITS_CONNECTIONS_MAX_IDLE=" + overloadIdle.String(),
	// An Empty streams group is deleted, and its anchor leaves the
	// upstream group, this long after it became Empty (Kafka's
	// offsets.retention.check.interval.ms; default 10m).
	"STREAMSHIFT_COORDINATOR_OFFSETS_RETENTION_CHECK_INTERVAL=" + overloadGroupExpiry.String(),
}

// overloadRun is the one broker, the proxies and the good clients the
// attacks run against.
type overloadRun struct {
	ctx         context.Context
	out         string
	broker      *harness.Broker
	px, tlsPx   *harness.Proxy
	rss, tlsRSS *rssWatch
	good        *goodClients
	feed        *harness.Producer
	app         *harness.App
	apps        int // apps started: a dead app is replaced
	processed   atomic.Int64
	appFatal    *atomic.Value // string: the current app's uncaught exception
	tlsClient   []kgo.Opt
	tlsConfig   *tls.Config
	rows        []string
	baseRSS     int64 // measured with the good clients, before the attacks
}

// overloadAttack is one attack; run asserts what the limit promises
// (t.Errorf) and returns the outcome for the report.
type overloadAttack struct {
	name, limit string
	tls         bool // against the TLS proxy
	run         func(t *testing.T, o *overloadRun) string
}

// TestOverload starts one Kafka 3.9 broker and two streamshift processes
// (plaintext, and TLS on the client side), both under a descriptor limit of
// overloadNoFile, with the limits of overloadEnv. Good clients run
// throughout on the plaintext proxy: a franz-go producer and consumer group,
// and a Kafka Streams 4.4 app on the streams protocol. Each attack runs in
// turn; after each the proxy and the broker must be alive (a dead proxy is
// restarted for the next attack), the good clients must make progress, the
// attackers' connections must be refused or closed as the limit says, and
// the proxy's peak RSS (VmRSS every 100 ms and VmHWM) must stay within
// overloadRSSLimit (idle + 2 × the budget). The report goes to
// e2e/out/TestOverload/report.md (BENCHMARKS.md "Overload (issue #26)").
func TestOverload(t *testing.T) {
	// Not parallel (it runs first, alone): the good clients' progress under each attack and the
	// proxies' RSS are read with no other test's JVMs competing for the two cores.
	out, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := &overloadRun{ctx: ctx, out: out}
	// queued.max.request.bytes is Kafka's own bound on request bytes held
	// (unbounded by default): streamshift forwards a Produce frame as it
	// arrives, and 8 stalled 100 MiB Produce prefixes would otherwise run
	// the broker's 512 MiB heap out, through the proxy or not. It must be at
	// least socket.request.max.bytes (100 MiB).
	o.broker, err = harness.StartBroker(ctx, harness.BrokerOptions{Version: harness.Kafka39, Dir: filepath.Join(out, "broker"),
		Overrides: []string{"queued.max.request.bytes=209715200"}})
	if err != nil {
		t.Fatal(err)
	}
	defer o.broker.Stop()
	if err := harness.CreateTopics(ctx, o.broker.Bootstrap, 3, "good", "e2e-input", "e2e-output"); err != nil {
		t.Fatal(err)
	}

	o.px, err = harness.StartProxy(ctx, harness.ProxyOptions{Dir: filepath.Join(out, "proxy"), Upstream: o.broker.Bootstrap,
		Streams: harness.Streams44TestSettings, Env: overloadEnv, NoFile: overloadNoFile, Args: []string{"--admin-listen", ""}})
	if err != nil {
		t.Fatal(err)
	}
	defer o.px.Stop()
	if err := os.MkdirAll(filepath.Join(out, "pki"), 0o755); err != nil {
		t.Fatal(err)
	}
	pf, err := testpki.NewServerFiles(filepath.Join(out, "pki"), "overload-proxy", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	o.tlsConfig = &tls.Config{RootCAs: pf.CA.Pool(), MinVersion: tls.VersionTLS12}
	o.tlsClient = []kgo.Opt{kgo.DialTLSConfig(o.tlsConfig)}
	o.tlsPx, err = harness.StartProxy(ctx, harness.ProxyOptions{Dir: filepath.Join(out, "proxy-tls"), Upstream: o.broker.Bootstrap,
		Streams: harness.Streams44TestSettings, NoFile: overloadNoFile, Probe: o.tlsClient, Args: []string{"--admin-listen", "", "--proxy-id", "e2e-tls"},
		Env: append([]string{"STREAMSHIFT_TLS_CERT_FILE=" + pf.CertFile, "STREAMSHIFT_TLS_KEY_FILE=" + pf.KeyFile,
			"STREAMSHIFT_TLS_HANDSHAKE_TIMEOUT=" + overloadHandshake.String(), "STREAMSHIFT_TLS_MAX_HANDSHAKES=64"}, overloadEnv...)})
	if err != nil {
		t.Fatal(err)
	}
	defer o.tlsPx.Stop()
	o.rss = watchRSS(func() int { return o.px.PID() }, overloadKillRSS)
	defer o.rss.close()
	o.tlsRSS = watchRSS(func() int { return o.tlsPx.PID() }, overloadKillRSS)
	defer o.tlsRSS.close()

	if o.good, err = startGoodClients(o.px.Bootstrap, "good", "overload-good"); err != nil {
		t.Fatal(err)
	}
	defer o.good.close()
	if o.feed, err = harness.StartProducer(harness.ProducerOptions{Bootstrap: o.px.Bootstrap, Topic: "e2e-input", Rate: 20}); err != nil {
		t.Fatal(err)
	}
	defer o.feed.Stop()
	if err := o.startApp(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = o.app.Stop() }()
	if err := waitFor(ctx, 120*time.Second, func() bool { return o.processed.Load() > 0 && o.good.consumed.Load() > 0 }); err != nil {
		t.Fatalf("the good clients did not start: processed %d, consumed %d (app log %s)", o.processed.Load(), o.good.consumed.Load(), o.app.Log)
	}
	time.Sleep(10 * time.Second) // the base: good clients running, nothing else
	base, _ := procStatusBytes(o.px.PID(), "VmRSS:")
	o.baseRSS = base
	t.Logf("base RSS with the good clients: %d MiB (overloadIdleRSS %d MiB)", base>>20, overloadIdleRSS>>20)
	o.rows = append(o.rows, fmt.Sprintf("| none (good clients only) | | %d (base) | %s | |", base>>20, o.p99Text(time.Now().Add(-10*time.Second), time.Now())))

	for _, a := range overloadAttacks() {
		t.Run(a.name, func(t *testing.T) { o.attack(t, a) })
	}
	if err := o.good.err(); err != nil {
		t.Errorf("good clients: %v", err)
	}
	o.writeReport(t)
}

// startApp starts the good Kafka Streams app (count app, streams
// protocol) through the plaintext proxy, in a fresh directory each time.
func (o *overloadRun) startApp() error {
	o.apps++
	o.processed.Store(0)
	fatal := &atomic.Value{}
	o.appFatal = fatal
	app, err := harness.StartApp(harness.AppOptions{Name: "good", Dir: filepath.Join(o.out, fmt.Sprintf("app-good-%d", o.apps)), Bootstrap: o.px.Bootstrap,
		GroupProtocol: "streams", OnEvent: func(ev harness.Event) {
			switch ev.Kind {
			case "processed":
				o.processed.Store(ev.Count)
			case "uncaught":
				fatal.Store(ev.Error)
			}
		}})
	if err != nil {
		return err
	}
	o.app = app
	return nil
}

// appDied is the good app's uncaught exception, or that it exited.
func (o *overloadRun) appDied() (string, bool) {
	if f, ok := o.appFatal.Load().(string); ok {
		return f, true
	}
	return "exited", o.app.Exited()
}

// attack runs one attack and the checks every attack shares.
func (o *overloadRun) attack(t *testing.T, a overloadAttack) {
	px, w := o.px, o.rss
	if a.tls {
		px, w = o.tlsPx, o.tlsRSS
	}
	// Go hands freed memory back to the kernel over seconds: an attack
	// starts once the last one's is back within 32 MiB of the measured base
	// (waiting at most 30 s), so each row is judged on its own where it can
	// be. On a build without the limits the memory stays, and the row shows
	// the RSS the attack started from.
	_ = waitFor(o.ctx, 30*time.Second, func() bool {
		rss, err := procStatusBytes(px.PID(), "VmRSS:")
		return err != nil || rss <= o.baseRSS+32<<20
	})
	w.reset()
	before, _ := procStatusBytes(px.PID(), "VmRSS:")
	start := time.Now()
	outcome := a.run(t, o)
	end := time.Now()
	peak := w.peakBytes()
	var fatal []string
	if k := w.killed.Load(); k > 0 {
		t.Errorf("the proxy reached %d MiB and was killed", k>>20)
		fatal = append(fatal, fmt.Sprintf("killed at %d MiB", k>>20))
	}
	select {
	case <-px.Done():
		t.Errorf("the proxy exited: %v (log %s)", px.ExitErr(), px.Log)
		fatal = append(fatal, fmt.Sprintf("proxy exited (%v), restarted", px.ExitErr()))
		if err := px.Restart(o.ctx); err != nil {
			t.Fatalf("restart after the attack: %v", err)
		}
	default:
	}
	if peak > overloadRSSLimit {
		t.Errorf("peak RSS %d MiB, above the idle %d MiB + 2 × max-buffered-bytes %d MiB", peak>>20, overloadIdleRSS>>20, overloadBudget>>20)
	}
	if err := o.progress(a.tls); err != nil {
		t.Error(err)
		fatal = append(fatal, err.Error())
	}
	if len(fatal) > 0 {
		outcome = "**" + strings.Join(fatal, "; ") + "**; " + outcome
	}
	verdict := "pass"
	if t.Failed() {
		verdict = "FAIL"
	}
	o.rows = append(o.rows, fmt.Sprintf("| %s | %s | %d → %d | %s | %s: %s |", a.name, a.limit, before>>20, peak>>20, o.p99Text(start, end), verdict, outcome))
	t.Logf("%s: peak RSS %d MiB, %s", a.name, peak>>20, outcome)
}

// progress checks the good clients move on after an attack: acknowledged
// and consumed records and the Streams app's processed count all grow
// within a generous deadline, the broker lives and the app has not died.
func (o *overloadRun) progress(tls bool) error {
	if o.broker == nil || !brokerAlive(o.broker) {
		return fmt.Errorf("the broker is gone")
	}
	acked, consumed, processed := o.good.acked.Load(), o.good.consumed.Load(), o.processed.Load()
	err := waitFor(o.ctx, 90*time.Second, func() bool {
		_, died := o.appDied()
		return died || o.good.acked.Load() > acked+50 && o.good.consumed.Load() > consumed+50 && o.processed.Load() > processed
	})
	if f, died := o.appDied(); died {
		// The next attacks get a live app again.
		dead := o.app.Log
		_ = o.app.Stop()
		if err := o.startApp(); err != nil {
			return fmt.Errorf("the Streams app died: %s (log %s); restart: %w", f, dead, err)
		}
		_ = waitFor(o.ctx, 120*time.Second, func() bool { return o.processed.Load() > 0 })
		return fmt.Errorf("the Streams app died: %s (log %s), restarted", f, dead)
	}
	if err != nil {
		return fmt.Errorf("good clients stalled for 90 s after the attack: acked %d → %d, consumed %d → %d, Streams app processed %d → %d",
			acked, o.good.acked.Load(), consumed, o.good.consumed.Load(), processed, o.processed.Load())
	}
	if tls {
		return o.tlsProduce()
	}
	return nil
}

// tlsProduce writes 10 records through the TLS proxy.
func (o *overloadRun) tlsProduce() error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(o.tlsPx.Bootstrap), kgo.DefaultProduceTopic("good")}, o.tlsClient...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(o.ctx, 60*time.Second)
	defer cancel()
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "tls-%d", i)}).FirstErr(); err != nil {
			return fmt.Errorf("a TLS client could not produce after the attack: %w", err)
		}
	}
	return nil
}

func (o *overloadRun) p99Text(from, to time.Time) string {
	p99, n := o.good.p99(from, to)
	if n == 0 {
		return "no record acked"
	}
	return fmt.Sprintf("%d ms (%d records)", p99.Milliseconds(), n)
}

func (o *overloadRun) writeReport(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "# TestOverload\n\nload average at end %s; streamshift under `prlimit --nofile=%d`, max-buffered-bytes %d MiB, max-connections-per-ip %d, request-timeout %s, connections-max-idle %s; RSS limit %d MiB (idle %d MiB + 2 × max-buffered-bytes)\n\n",
		loadAvg(), overloadNoFile, overloadBudget>>20, overloadPerIP, overloadRequestTimeout, overloadIdle, overloadRSSLimit>>20, overloadIdleRSS>>20)
	b.WriteString("| attack | limit | proxy RSS at start → peak (MiB) | good produce p99 during the attack | outcome |\n|---|---|---|---|---|\n")
	for _, r := range o.rows {
		b.WriteString(r + "\n")
	}
	if err := os.WriteFile(filepath.Join(o.out, "report.md"), []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
	t.Log("\n" + b.String())
}

// brokerAlive: the broker still answers Kafka requests.
func brokerAlive(b *harness.Broker) bool {
	return harness.WaitKafkaReady(context.Background(), b.Bootstrap, 30*time.Second, nil) == nil
}

// waitFor polls cond every 200 ms until it holds or d passes.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %s", d)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}
