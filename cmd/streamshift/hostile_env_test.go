package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/internal/testlog"
)

// The hostile-request suite's running streamshift: `streamshift run` as a
// child process (this test binary as the real main, TestMain), so its RSS
// is its own, in front of kfake in the test process, with the online
// migration on (so the classic group keys are served too), its log kept
// for the checks, and the default limits: the RSS check is the promise of
// README's limits section as an operator gets it.

// hostileMaxBuffered is limits.max-buffered-bytes: the default, or what
// STREAMSHIFT_LIMITS_MAX_BUFFERED_BYTES (which the child inherits, as
// every STREAMSHIFT_* variable) says.
var hostileMaxBuffered = func() int64 {
	if v, err := strconv.ParseInt(os.Getenv("STREAMSHIFT_LIMITS_MAX_BUFFERED_BYTES"), 10, 64); err == nil {
		return v
	}
	return 256 << 20
}()

// lockedLog is the instance's log, read by the checks while it writes.
type lockedLog struct{ testlog.Buffer }

// lines are the log lines that match any of words (case-insensitive).
func (l *lockedLog) lines(words ...string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(l.String()))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		low := strings.ToLower(sc.Text())
		for _, w := range words {
			if strings.Contains(low, strings.ToLower(w)) {
				out = append(out, sc.Text())
				break
			}
		}
	}
	return out
}

// tally counts the warn and error lines by message and reason, most
// frequent first.
func (l *lockedLog) tally() string {
	n := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(l.String()))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var line struct{ Level, Message, Reason, Error string }
		if json.Unmarshal(sc.Bytes(), &line) != nil || (line.Level != "warn" && line.Level != "error") {
			continue
		}
		reason := line.Reason
		if len(reason) > 60 {
			reason = reason[:60] + "…"
		}
		n[line.Level+": "+line.Message+" ("+reason+")"]++
	}
	type row struct {
		what string
		n    int
	}
	var rows []row
	for w, c := range n {
		rows = append(rows, row{w, c})
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].n > rows[j].n || rows[i].n == rows[j].n && rows[i].what < rows[j].what
	})
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "  %6d  %s\n", r.n, r.what)
	}
	return b.String()
}

type hostileInstance struct {
	bootstrap, admin string
	cluster          *kfake.Cluster
	cmd              *exec.Cmd
	log              *lockedLog
	exited           chan struct{}
	// rssIdle is the process's RSS once it serves and the canary ran
	// once: the budget check's base.
	rssIdle int64
	// killed is set when the watchdog killed the process for its RSS.
	killed atomic.Int64
}

// hostileRSSCap is where the watchdog kills the process: far past the
// promise, before it takes the machine with it.
const hostileRSSCap = 3 << 30

// watch kills the process past hostileRSSCap, and reports the test
// process's own RSS (kfake's) past it too.
func (in *hostileInstance) watch(t *testing.T) {
	for {
		select {
		case <-in.exited:
			return
		case <-time.After(100 * time.Millisecond):
		}
		if rss := in.rss("VmRSS"); rss > hostileRSSCap {
			in.killed.Store(rss)
			_ = in.cmd.Process.Kill()
			return
		}
		if own := selfRSS(); own > hostileRSSCap {
			// The generator's frames or kfake's state, not streamshift's:
			// the profile says which.
			prof := filepath.Join(os.TempDir(), fmt.Sprintf("hostile-test-heap-%d.pprof", os.Getpid()))
			if f, err := os.Create(prof); err == nil {
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
			panic(fmt.Sprintf("the test process (kfake, the generator) holds %d MiB; heap profile %s", own>>20, prof))
		}
	}
}

func (in *hostileInstance) gone() bool {
	select {
	case <-in.exited:
		return true
	default:
		return false
	}
}

func selfRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return -1
}

func startHostile(t *testing.T) *hostileInstance {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "canary", "words", "in"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t, 4) // bootstrap, node 0, admin, internal
	in := &hostileInstance{bootstrap: "127.0.0.1:" + strconv.Itoa(port), admin: "127.0.0.1:" + strconv.Itoa(port+2),
		cluster: cluster, log: &lockedLog{}, exited: make(chan struct{})}
	in.cmd = exec.Command(exe, "run", "--upstream", cluster.ListenAddrs()[0], "--listen", in.bootstrap,
		"--node-id-min", "0", "--node-id-max", "0", "--admin-listen", in.admin)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STREAMSHIFT_HOSTILE_") { // the suite's, not streamshift's
			env = append(env, kv)
		}
	}
	in.cmd.Env = append(env, asStreamshift+"=1",
		"STREAMSHIFT_MIGRATION_POLICY=bidirectional",
		"STREAMSHIFT_CLUSTER_LISTEN=127.0.0.1:"+strconv.Itoa(port+3),
		"STREAMSHIFT_STREAMS_INITIAL_REBALANCE_DELAY_MS=0")
	in.cmd.Stdout, in.cmd.Stderr = in.log, in.log
	if err := in.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = in.cmd.Wait()
		close(in.exited)
	}()
	go in.watch(t)
	t.Cleanup(func() {
		_ = in.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-in.exited:
		case <-time.After(60 * time.Second):
			_ = in.cmd.Process.Kill()
			t.Error("streamshift did not stop on SIGTERM")
		}
	})
	for {
		if code, err := httpGet("http://" + in.admin + "/readyz"); err == nil && code == http.StatusOK {
			break
		}
		select {
		case <-in.exited:
			t.Fatalf("streamshift exited: %v\n%s", in.cmd.ProcessState, in.log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := in.canary(0); err != nil {
		t.Fatalf("the canary before any hostile request: %v", err)
	}
	in.rssIdle = in.rss("VmRSS")
	return in
}

// rss is a field of the process's /proc status in bytes: VmRSS now,
// VmHWM its peak.
func (in *hostileInstance) rss(field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", in.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return -1
}

// check is the health of the instance after a batch: it still runs,
// /readyz and /metrics answer 200, a client still produces, consumes and
// joins a group through it, the live heap is within idle + 2 ×
// limits.max-buffered-bytes (README's promise), and its log has no
// recovered panic. It returns what failed.
func (in *hostileInstance) check(batch int) []string {
	var failed []string
	select {
	case <-in.exited:
		if rss := in.killed.Load(); rss > 0 {
			return []string{fmt.Sprintf("streamshift killed by the test at %d MiB of RSS", rss>>20)}
		}
		return []string{fmt.Sprintf("streamshift exited: %v", in.cmd.ProcessState)}
	default:
	}
	for _, path := range []string{"/readyz", "/metrics"} {
		if code, err := httpGet("http://" + in.admin + path); err != nil || code != http.StatusOK {
			failed = append(failed, fmt.Sprintf("%s: %d %v", path, code, err))
		}
	}
	if err := in.canary(batch); err != nil {
		failed = append(failed, "canary: "+err.Error())
	}
	// The peak (VmHWM), not the RSS after the batch: the promise holds at
	// every moment.
	if peak, limit := in.rss("VmHWM"), in.rssIdle+2*hostileMaxBuffered; peak > limit {
		failed = append(failed, fmt.Sprintf("peak RSS %d MiB over idle %d MiB + 2 × max-buffered-bytes (%d MiB)", peak>>20, in.rssIdle>>20, hostileMaxBuffered>>20))
	}
	if lines := in.log.lines("panic"); len(lines) > 0 {
		failed = append(failed, fmt.Sprintf("%d log lines of a recovered panic, first: %s", len(lines), lines[0]))
	}
	return failed
}

func httpGet(url string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// canary produces a record through the proxy and consumes it back in a
// consumer group of its own: the group's join, sync and offset fetch go
// through streamshift's routes.
func (in *hostileInstance) canary(batch int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(in.bootstrap), kgo.ConsumerGroup(fmt.Sprintf("canary-%d", batch)),
		kgo.ConsumeTopics("canary"), kgo.DefaultProduceTopic("canary"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ClientID("canary"))
	if err != nil {
		return err
	}
	defer cl.Close()
	value := []byte(fmt.Sprintf("canary-%d-%d", batch, time.Now().UnixNano()))
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: value, Partition: int32(batch % 3)}).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("consume in group canary-%d: %w", batch, err)
		}
		found := false
		fs.EachRecord(func(r *kgo.Record) { found = found || bytes.Equal(r.Value, value) })
		if found {
			return nil
		}
	}
}

// rawConn is a client connection that sends request frames as they are and
// reads one answer per request.
type rawConn struct{ c net.Conn }

func dialRaw(addr string) (*rawConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &rawConn{c}, nil
}

// exchange writes frame and reads an answer within wait: the answer's
// size, or an error (the connection closed, or no answer in time: a
// request the proxy holds, as a JoinGroup waits for its rebalance).
func (r *rawConn) exchange(frame []byte, wait time.Duration) (int, error) {
	_ = r.c.SetDeadline(time.Now().Add(wait))
	if _, err := r.c.Write(frame); err != nil {
		return 0, err
	}
	var size [4]byte
	if _, err := io.ReadFull(r.c, size[:]); err != nil {
		return 0, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if _, err := io.CopyN(io.Discard, r.c, int64(n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

func (r *rawConn) close() { _ = r.c.Close() }

// Frames files: the request frames of a batch, one a line in hex (size
// prefix included), '#' lines are comments. A finding is saved as one, and
// the replay test sends every file of testdata/hostile.

func writeFrames(path, comment string, frames [][]byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	for _, line := range strings.Split(comment, "\n") {
		b.WriteString("# " + line + "\n")
	}
	for _, f := range frames {
		b.WriteString(hex.EncodeToString(f))
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func readFrames(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var frames [][]byte
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f, err := hex.DecodeString(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		frames = append(frames, f)
	}
	return frames, nil
}
