//go:build e2e

package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The two helper processes of TestScaleBenchmark, each this test binary
// again with its job in the environment, so neither's CPU is the proxy's:
//
//   - the broker: kfake (Kafka 3.9's APIs), counting every request it gets by
//     key, which is what the proxy sends upstream (client requests forwarded,
//     authorization probes, anchor heartbeats, metadata refreshes);
//   - the members: G×M Kafka Streams members, each on its own connection as
//     a Kafka Streams client has, speaking StreamsGroupHeartbeat (kmsg on a
//     plain TCP connection). It takes one command a line on stdin and
//     answers each with one "SCALE {json}" line on stdout.

const (
	scaleKfakeEnv   = "STREAMSHIFT_SCALE_KFAKE"   // partitions of the source topic
	scaleLoadgenEnv = "STREAMSHIFT_SCALE_LOADGEN" // scaleJob
	scaleTopic      = "scale-in"
)

// TestScaleBenchKfake is the broker process of TestScaleBenchmark: it prints
// "KFAKE {addr, counts}" and runs until its stdin closes. GET /counts on the
// counts address answers the requests received so far, by name.
func TestScaleBenchKfake(t *testing.T) {
	spec := os.Getenv(scaleKfakeEnv)
	if spec == "" {
		t.Skip("broker process of TestScaleBenchmark")
	}
	var partitions int32
	if _, err := fmt.Sscan(spec, &partitions); err != nil {
		t.Fatal(err)
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(kversion.V3_9_0()), kfake.SeedTopics(partitions, scaleTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	counts := map[string]int64{}
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		counts[kmsg.NameForKey(req.Key())]++
		mu.Unlock()
		return nil, nil, false
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			_ = json.NewEncoder(w).Encode(counts)
		}))
	}()
	fmt.Printf("KFAKE %s %s\n", c.ListenAddrs()[0], ln.Addr())
	_, _ = bufio.NewReader(os.Stdin).ReadString(0) // until EOF: the benchmark is done
}

// scaleJob is the member process's fleet.
type scaleJob struct {
	Addrs   []string `json:"addrs"` // member i connects to Addrs[i % len]
	Groups  int      `json:"groups"`
	Members int      `json:"members"` // per group
}

// scaleCmd is one command on the member process's stdin.
type scaleCmd struct {
	Do       string        `json:"do"` // floor-start, floor-stop, storm, steady, closed, churn, quit
	For      time.Duration `json:"for"`
	Interval time.Duration `json:"interval"` // floor: each connection's request interval
	PerMin   int           `json:"per_min"`  // churn: members leaving and joining a minute
}

// scaleResult answers a command.
type scaleResult struct {
	Requests int     `json:"requests"` // counted heartbeats (or floor requests)
	Rate     float64 `json:"rate"`     // per second
	P50      float64 `json:"p50_ms"`
	P99      float64 `json:"p99_ms"`
	Max      float64 `json:"max_ms"`
	Errors   int     `json:"errors"`   // error codes answered (fenced, unknown member, …) and failed connections
	Rejoined int     `json:"rejoined"` // members that had to join again (fenced)
	Churned  int     `json:"churned"`  // members that left and joined on purpose
	Err      string  `json:"err,omitempty"`
}

// TestScaleBenchLoadgen is the member process of TestScaleBenchmark.
func TestScaleBenchLoadgen(t *testing.T) {
	spec := os.Getenv(scaleLoadgenEnv)
	if spec == "" {
		t.Skip("member process of TestScaleBenchmark")
	}
	var job scaleJob
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		t.Fatal(err)
	}
	f := newFleet(job)
	defer f.stop()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var cmd scaleCmd
		if err := json.Unmarshal(in.Bytes(), &cmd); err != nil {
			t.Fatal(err)
		}
		if cmd.Do == "quit" {
			return
		}
		res := f.run(cmd)
		b, _ := json.Marshal(res)
		fmt.Printf("SCALE %s\n", b)
	}
}

// fleet is the member process's state: its members and what is being
// recorded now.
type fleet struct {
	job     scaleJob
	ctx     context.Context
	cancel  context.CancelFunc
	members []*scaleMember
	wg      sync.WaitGroup

	closedLoop atomic.Bool
	mu         sync.Mutex
	wake       chan struct{} // closed when the mode changes, so sleepers look again
	recording  bool
	lats       []float64 // ms
	errs       int
	rejoined   int
	churned    int
	floorStop  func()
}

func newFleet(job scaleJob) *fleet {
	ctx, cancel := context.WithCancel(context.Background())
	return &fleet{job: job, ctx: ctx, cancel: cancel, wake: make(chan struct{})}
}

func (f *fleet) stop() {
	f.cancel()
	f.wg.Wait()
}

func (f *fleet) record(lat time.Duration, err bool) {
	f.mu.Lock()
	if f.recording {
		if err {
			f.errs++
		} else {
			f.lats = append(f.lats, float64(lat.Nanoseconds())/1e6)
		}
	}
	f.mu.Unlock()
}

func (f *fleet) count(p *int) {
	f.mu.Lock()
	if f.recording {
		*p++
	}
	f.mu.Unlock()
}

func (f *fleet) wakeChan() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wake
}

func (f *fleet) rewake() {
	f.mu.Lock()
	close(f.wake)
	f.wake = make(chan struct{})
	f.mu.Unlock()
}

// window records for d and returns what was recorded.
func (f *fleet) window(d time.Duration, during func()) scaleResult {
	f.mu.Lock()
	f.recording, f.lats, f.errs, f.rejoined, f.churned = true, nil, 0, 0, 0
	f.mu.Unlock()
	start := time.Now()
	if during != nil {
		during()
	} else {
		time.Sleep(d)
	}
	elapsed := time.Since(start)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recording = false
	res := scaleResult{Requests: len(f.lats), Rate: float64(len(f.lats)) / elapsed.Seconds(), Errors: f.errs, Rejoined: f.rejoined, Churned: f.churned}
	if len(f.lats) > 0 {
		res.P50, res.P99, res.Max = percentile(f.lats, 0.5), percentile(f.lats, 0.99), percentile(f.lats, 1)
	}
	return res
}

func (f *fleet) run(cmd scaleCmd) scaleResult {
	switch cmd.Do {
	case "floor-start":
		return f.floorStart(cmd)
	case "floor-stop":
		if f.floorStop != nil {
			f.floorStop()
		}
		return scaleResult{}
	case "storm":
		return f.storm()
	case "steady":
		return f.window(cmd.For, nil)
	case "closed":
		f.closedLoop.Store(true)
		f.rewake()
		res := f.window(cmd.For, nil)
		f.closedLoop.Store(false)
		return res
	case "churn":
		return f.window(cmd.For, func() {
			every := time.Minute / time.Duration(max(1, cmd.PerMin))
			tick := time.NewTicker(every)
			defer tick.Stop()
			end := time.After(cmd.For)
			for {
				select {
				case <-end:
					return
				case <-tick.C:
					m := f.members[mrand.IntN(len(f.members))]
					select {
					case m.churn <- struct{}{}:
					default:
					}
				}
			}
		})
	}
	return scaleResult{Err: "unknown command " + cmd.Do}
}

// floorStart opens one connection per member and sends a forwarded request
// (Metadata of the source topic) on each at the members' heartbeat
// interval: the same rate of requests through the proxy as steady, what any
// forwarded request costs. It returns once the first interval has spread
// the connections' starts; a "steady" window then counts the requests, and
// floor-stop closes the connections. No member has joined yet.
func (f *fleet) floorStart(cmd scaleCmd) scaleResult {
	n := f.job.Groups * f.job.Members
	conns := make([]*smallConn, n)
	for i := range conns {
		sc, err := dialSmall(f.job.Addrs[i%len(f.job.Addrs)])
		if err != nil {
			return scaleResult{Err: fmt.Sprintf("floor connection %d: %v", i, err)}
		}
		conns[i] = sc
	}
	ctx, cancel := context.WithCancel(f.ctx)
	var wg sync.WaitGroup
	f.floorStop = func() {
		cancel()
		wg.Wait()
		for _, sc := range conns {
			sc.close()
		}
	}
	for _, sc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := kmsg.NewPtrMetadataRequest()
			req.Version = 12
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(scaleTopic)
			req.Topics = []kmsg.MetadataRequestTopic{rt}
			timer := time.NewTimer(time.Duration(mrand.Int64N(int64(cmd.Interval)))) // spread over one interval
			defer timer.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-timer.C:
				}
				start := time.Now()
				r, err := sc.do(req)
				bad := err != nil
				if !bad {
					m := r.(*kmsg.MetadataResponse)
					bad = len(m.Topics) != 1 || m.Topics[0].ErrorCode != 0
				}
				f.record(time.Since(start), bad)
				if err != nil {
					return
				}
				timer.Reset(cmd.Interval)
			}
		}()
	}
	time.Sleep(cmd.Interval)
	return scaleResult{}
}

// storm starts every member at once and answers when each has joined (its
// first heartbeat answered with a member epoch); the benchmark watches the
// groups become Stable on the proxy's /metrics meanwhile. The members then
// heartbeat at their interval until the process ends.
func (f *fleet) storm() scaleResult {
	n := f.job.Groups * f.job.Members
	joined := make(chan time.Duration, n)
	f.mu.Lock()
	f.recording, f.lats, f.errs = true, nil, 0
	f.mu.Unlock()
	start := time.Now()
	for i := 0; i < n; i++ {
		m := &scaleMember{f: f, addr: f.job.Addrs[i%len(f.job.Addrs)], group: fmt.Sprintf("scale-%d", i/f.job.Members),
			process: fmt.Sprintf("p-%d", i), churn: make(chan struct{}, 1)}
		f.members = append(f.members, m)
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			m.live(joined)
		}()
	}
	var joins []float64
	timeout := time.After(5 * time.Minute)
	for len(joins) < n {
		select {
		case d := <-joined:
			joins = append(joins, float64(d.Milliseconds()))
		case <-timeout:
			return scaleResult{Err: fmt.Sprintf("%d of %d members joined in 5 min", len(joins), n)}
		}
	}
	elapsed := time.Since(start)
	f.mu.Lock()
	f.recording = false
	errs := f.errs
	f.mu.Unlock()
	return scaleResult{Requests: n, Rate: float64(n) / elapsed.Seconds(), P50: percentile(joins, 0.5), P99: percentile(joins, 0.99),
		Max: percentile(joins, 1), Errors: errs}
}

// scaleMember is one Kafka Streams member on its own connection.
type scaleMember struct {
	f                     *fleet
	addr, group, process  string
	churn                 chan struct{}
	sc                    *smallConn
	id                    string
	epoch                 int32
	interval              time.Duration
	active, standby, warm []kmsg.TaskIDs
	report                bool // tasks changed: say so in the next heartbeat
	gen                   int
}

// live joins, reports joined once, and heartbeats until the fleet stops;
// a member fenced or failed joins again as a new member.
func (m *scaleMember) live(joined chan<- time.Duration) {
	start := time.Now()
	first := true
	for m.f.ctx.Err() == nil {
		if err := m.join(); err != nil {
			m.f.record(0, true)
			if joinErrorsLogged.Add(1) <= 20 {
				fmt.Fprintf(os.Stderr, "member %s: %v\n", m.id, err) // the member process's log
			}
			if first && errors.Is(err, errRetriableJoin) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			time.Sleep(time.Second)
			continue
		}
		if first {
			joined <- time.Since(start)
			first = false
		}
		m.heartbeatUntilGone()
		if m.sc != nil {
			m.sc.close()
			m.sc = nil
		}
	}
	if m.sc != nil {
		m.sc.close()
	}
}

var errRetriableJoin = errors.New("coordinator not ready")

// joinErrorsLogged bounds the join errors written to the log.
var joinErrorsLogged atomic.Int32

// join connects and sends the joining heartbeat (epoch 0, the topology).
func (m *scaleMember) join() error {
	if m.sc == nil {
		sc, err := dialSmall(m.addr)
		if err != nil {
			return err
		}
		m.sc = sc
	}
	m.gen++
	m.id = fmt.Sprintf("%s-%d", m.process, m.gen)
	m.active, m.standby, m.warm = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID = 0, m.group, m.id
	req.EndpointInformationEpoch, req.RebalanceTimeoutMillis = -1, 300000
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{scaleTopic}
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	req.Topology = &topo
	req.ProcessID = kmsg.StringPtr(m.process)
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = m.active, m.standby, m.warm
	req.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
	start := time.Now()
	r, err := m.sc.do(req)
	if err != nil {
		m.sc.close()
		m.sc = nil
		return err
	}
	resp := r.(*kmsg.StreamsGroupHeartbeatResponse)
	if resp.ErrorCode != 0 {
		if resp.ErrorCode == kerr.CoordinatorLoadInProgress.Code || resp.ErrorCode == kerr.CoordinatorNotAvailable.Code || resp.ErrorCode == kerr.NotCoordinator.Code {
			return errRetriableJoin
		}
		return fmt.Errorf("join %s: %w", m.group, kerr.ErrorForCode(resp.ErrorCode))
	}
	m.f.record(time.Since(start), false)
	m.adopt(resp)
	return nil
}

func (m *scaleMember) adopt(resp *kmsg.StreamsGroupHeartbeatResponse) {
	m.epoch = resp.MemberEpoch
	m.interval = time.Duration(max(100, resp.HeartbeatIntervalMillis)) * time.Millisecond
	if resp.ActiveTasks != nil {
		m.active, m.standby, m.warm, m.report = resp.ActiveTasks, resp.StandbyTasks, resp.WarmupTasks, true
		if m.standby == nil {
			m.standby = []kmsg.TaskIDs{}
		}
		if m.warm == nil {
			m.warm = []kmsg.TaskIDs{}
		}
	}
}

// heartbeatUntilGone heartbeats at the interval (back to back in closed
// loop; at once after an assignment, to report it, as Kafka Streams does)
// until the member is fenced, its connection fails, it is churned or the
// fleet stops.
func (m *scaleMember) heartbeatUntilGone() {
	// A random first wait spreads the members' heartbeats over the interval.
	wait := time.Duration(mrand.Int64N(int64(m.interval)))
	if m.report {
		wait = 0
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		if !m.f.closedLoop.Load() {
			select {
			case <-m.f.ctx.Done():
				m.leave()
				return
			case <-m.churn:
				m.leave()
				m.f.count(&m.f.churned)
				return
			case <-m.f.wakeChan():
				if !m.f.closedLoop.Load() {
					continue
				}
			case <-timer.C:
			}
		}
		req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		req.Version, req.Group, req.MemberID, req.MemberEpoch = 0, m.group, m.id, m.epoch
		req.RebalanceTimeoutMillis, req.EndpointInformationEpoch = -1, -1
		if m.report {
			req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = m.active, m.standby, m.warm
			m.report = false
		}
		start := time.Now()
		r, err := m.sc.do(req)
		if err != nil {
			m.f.record(0, true)
			m.f.count(&m.f.rejoined)
			return
		}
		resp := r.(*kmsg.StreamsGroupHeartbeatResponse)
		if resp.ErrorCode != 0 {
			m.f.record(0, true)
			m.f.count(&m.f.rejoined)
			return // fenced or unknown: join again as a new member
		}
		m.f.record(time.Since(start), false)
		m.adopt(resp)
		if m.report {
			timer.Reset(0)
		} else {
			timer.Reset(m.interval)
		}
	}
}

// leave sends the leaving heartbeat (epoch -1) and closes the connection.
func (m *scaleMember) leave() {
	if m.sc == nil {
		return
	}
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.MemberEpoch = 0, m.group, m.id, -1
	req.RebalanceTimeoutMillis, req.EndpointInformationEpoch = -1, -1
	_, _ = m.sc.do(req)
	m.sc.close()
	m.sc = nil
}
