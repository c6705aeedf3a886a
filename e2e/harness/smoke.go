package harness

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Kafka36 is kafka-streams 3.6.2, a smoke-test client only (e2e/systest-3.6; no broker): classic
// only, and it cannot bootstrap again (metadata.recovery.strategy came in 3.8), as the classic
// Kafka Streams versions a migration starts from.
const Kafka36 = "3.6"

// smokeVersions are the kafka-streams versions of Kafka's smoke test the e2e build provides
// (e2e/systest-<version>); all but Kafka44 are classic only. Kafka28 (kafka-streams 2.8.2) is
// the oldest classic client a migration starts from: SubscriptionInfo v9, and exactly-once v2
// still named exactly_once_beta (smokeGuarantee).
var smokeVersions = []string{Kafka28, Kafka36, Kafka39, Kafka44}

// SmokeTopics are the topics of Kafka's Streams smoke test (SmokeTestDriver.topics());
// Kafka's system tests create them up front, as the driver does not.
var SmokeTopics = []string{"data", "echo", "max", "min", "min-suppressed", "min-raw", "dif", "sum",
	"sws-raw", "sws-suppressed", "cnt", "avg", "tagg", "fk"}

// SmokeOptions configure RunKafkaSmoke.
type SmokeOptions struct {
	Version       string // Kafka28 (Kafka's StreamsSmokeTest, 30 s of input), Kafka36 or Kafka39 (90 s) or Kafka44 (launcher over test-fixtures)
	Dir           string // run dir; must not exist or be empty
	Bootstrap     string // driver and clients connect here (broker or proxy)
	Admin         string // where the topics are created (default Bootstrap)
	GroupProtocol string // classic (default) or streams
	Guarantee     string // at_least_once (default) or exactly_once_v2
	Clients       int    // client instances, started one after another (default 2)
	ClientGap     time.Duration
	// 4.4 only: length of the input (default 15s) and records per key (default 300).
	Duration      time.Duration
	RecordsPerKey int
}

// RunKafkaSmoke runs Kafka's own smoke test: clients (SmokeTestClient: windowed aggregations,
// suppress, a re-keying, a foreign-key join), started ClientGap apart, while the driver
// produces; passes when the driver verifies every output and prints SUCCESS.
func RunKafkaSmoke(ctx context.Context, o SmokeOptions) error {
	if !slices.Contains(smokeVersions, o.Version) {
		return fmt.Errorf("smoke test version %q: want one of %v", o.Version, smokeVersions)
	}
	if err := CheckBuilt("systest-" + o.Version); err != nil {
		return err
	}
	o.Admin = cmp.Or(o.Admin, o.Bootstrap)
	o.Clients = cmp.Or(o.Clients, 2)
	o.ClientGap = cmp.Or(o.ClientGap, 5*time.Second)
	o.Duration = cmp.Or(o.Duration, 15*time.Second)
	o.RecordsPerKey = cmp.Or(o.RecordsPerKey, 300)
	if err := createSmokeRun(ctx, o.Dir, o.Admin); err != nil {
		return err
	}
	props := smokeProps(o.Bootstrap, o.Guarantee, o.Duration, o.RecordsPerKey)
	props["processing.guarantee"] = smokeGuarantee(o.Version, props["processing.guarantee"])
	if o.GroupProtocol != "" && o.GroupProtocol != "classic" {
		props["group.protocol"] = o.GroupProtocol
	}
	propsFile := filepath.Join(o.Dir, "smoke.properties")
	if err := writeProps(propsFile, props); err != nil {
		return err
	}
	script := filepath.Join(Root(), "bin", "systest.sh")
	start := func(name, cmd string, onLine func(string)) (*proc, error) {
		d := filepath.Join(o.Dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		return startProc("smoke "+name, filepath.Join(d, "out"), filepath.Join(d, "log"), onLine, nil, nil,
			script, "run", o.Version, d, propsFile, cmd)
	}
	var clients []*proc
	defer func() {
		for _, c := range clients {
			_ = c.stop(40 * time.Second)
		}
	}()
	startClient := func(i int) (*proc, error) {
		c, err := start(fmt.Sprintf("client-%d", i), "process", nil)
		if err == nil {
			clients = append(clients, c)
		}
		return c, err
	}

	// The driver starts once the first client runs, as in Kafka's system tests.
	first, err := startClient(1)
	if err != nil {
		return err
	}
	if err := waitFileContains(ctx, 90*time.Second, filepath.Join(o.Dir, "client-1", "out"), "REBALANCING -> RUNNING", first.done); err != nil {
		return fmt.Errorf("smoke client-1 never reached RUNNING (see %s): %w", filepath.Join(o.Dir, "client-1"), err)
	}
	var mu sync.Mutex
	var lines []string
	driver, err := start("driver", "run", func(line string) {
		mu.Lock()
		lines = append(lines, line)
		mu.Unlock()
	})
	if err != nil {
		return err
	}
	defer driver.stop(10 * time.Second)
	for i := 2; i <= o.Clients; i++ {
		select {
		case <-time.After(o.ClientGap):
		case <-driver.done:
		}
		if _, err := startClient(i); err != nil {
			return err
		}
	}
	select {
	case <-driver.done:
	case <-ctx.Done():
		return fmt.Errorf("smoke driver: %w (see %s)", ctx.Err(), filepath.Join(o.Dir, "driver"))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, l := range lines {
		if strings.TrimSpace(l) == "SUCCESS" {
			return nil
		}
	}
	tail := lines
	if len(tail) > 15 {
		tail = tail[len(tail)-15:]
	}
	return fmt.Errorf("smoke driver did not print SUCCESS (exit %v), last lines:\n%s", driver.err, strings.Join(tail, "\n"))
}

// createSmokeRun makes the run dir and creates the smoke topics on admin.
func createSmokeRun(ctx context.Context, dir, admin string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return CreateTopics(ctx, admin, 3, SmokeTopics...)
}

// smokeProps are the properties the smoke-test driver and every client share: where they
// connect, the processing guarantee (default at_least_once) and the length of the input.
func smokeProps(bootstrap, guarantee string, duration time.Duration, recordsPerKey int) map[string]string {
	return map[string]string{
		"bootstrap.servers":      bootstrap,
		"processing.guarantee":   cmp.Or(guarantee, "at_least_once"),
		"replication.factor":     "1",
		"commit.interval.ms":     "1000",
		"smoke.duration.seconds": fmt.Sprint(int(duration.Seconds())),
		"smoke.records.per.key":  fmt.Sprint(recordsPerKey),
	}
}

// smokeGuarantee is a processing guarantee as the given kafka-streams version names it: 2.8's
// StreamsSmokeTest accepts exactly_once_beta, the name exactly_once_v2 had until 3.0 (KIP-732),
// and exits on anything else.
func smokeGuarantee(version, guarantee string) string {
	if version == Kafka28 && guarantee == "exactly_once_v2" {
		return "exactly_once_beta"
	}
	return guarantee
}

func writeProps(path string, props map[string]string) error {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// waitFileContains polls a log file for a marker; died aborts early.
func waitFileContains(ctx context.Context, limit time.Duration, path, marker string, died <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), marker) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-died:
			return fmt.Errorf("process exited")
		case <-time.After(200 * time.Millisecond):
		}
	}
}
