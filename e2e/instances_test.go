//go:build e2e

package e2e_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/e2e/harness"
)

// instancesLogPartitions is the group log's partition count of the
// three-instance tests: two partitions per instance.
const instancesLogPartitions = 6

// instanceSession is the instances' session in their upstream group: how
// long a dead (or stopped) owner's partitions wait before they move.
const instanceSession = 6 * time.Second

// ssCluster is three `streamshift run` processes sharing one durable group
// log in front of one broker: each listens and advertises its own loopback
// address (127.0.0.1, .2, .3) on the same ports, as N instances behind one
// bootstrap name do on N hosts.
type ssCluster struct {
	procs [3]*streamshiftProc
	hosts [3]string
	admin [3]string
	port  int
}

// startSSCluster starts the three instances (proxy ids s1, s2, s3): the
// bootstrap port P, the broker (node 1) on P+1, /cluster on P+2, the
// internal listener on P+3. Each advertises its own address, or all of
// them advertised (a load balancer's address, where P and P+1 are free
// too) when it is set. They log at debug level unless env sets
// STREAMSHIFT_LOG_LEVEL (a benchmark's).
func startSSCluster(ctx context.Context, t testing.TB, dir, upstream, advertised string, env ...string) (*ssCluster, error) {
	return startSSClusterProbed(ctx, t, dir, upstream, advertised, nil, env...)
}

// startSSClusterProbed is startSSCluster whose readiness probes connect
// with probe (SASL in front of a broker that wants it).
func startSSClusterProbed(ctx context.Context, t testing.TB, dir, upstream, advertised string, probe []kgo.Opt, env ...string) (*ssCluster, error) {
	return startSSClusterWith(ctx, t, dir, upstream, advertised, probe, nil, env...)
}

// startSSClusterWith is startSSClusterProbed where instanceEnv, when set,
// adds to instance i's environment, knowing the host and the internal
// listener (cluster.listen) the instance gets.
func startSSClusterWith(ctx context.Context, t testing.TB, dir, upstream, advertised string, probe []kgo.Opt,
	instanceEnv func(i int, host, clusterListen string) ([]string, error), env ...string) (*ssCluster, error) {
	bin, err := harness.BuildStreamshift(dir)
	if err != nil {
		return nil, err
	}
	c := &ssCluster{hosts: [3]string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}}
	// The bootstrap, node 1's port, the admin port and the internal
	// listener (a fixed cluster.listen, as a network policy names it).
	hosts := c.hosts[:]
	if advertised != "" {
		hosts = append(hosts[:3:3], advertised)
	}
	if c.port, err = harness.FreePortsOnHosts(hosts, 4); err != nil {
		return nil, err
	}
	env = append([]string{
		"STREAMSHIFT_COORDINATOR_DURABLE_LOG=true",
		"STREAMSHIFT_COORDINATOR_CLUSTER_ID=e2e-instances",
		"STREAMSHIFT_COORDINATOR_LOG_PARTITIONS=" + strconv.Itoa(instancesLogPartitions),
		"STREAMSHIFT_COORDINATOR_INSTANCE_SESSION_TIMEOUT=" + instanceSession.String(),
	}, env...)
	logLevel := "debug"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "STREAMSHIFT_LOG_LEVEL="); ok {
			logLevel = v
		}
	}
	for i, h := range c.hosts {
		listen := net.JoinHostPort(h, strconv.Itoa(c.port))
		adv := cmp.Or(advertised, h)
		c.admin[i] = net.JoinHostPort(h, strconv.Itoa(c.port+2))
		pdir := filepath.Join(dir, fmt.Sprintf("streamshift-s%d", i+1))
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return nil, err
		}
		clusterListen := net.JoinHostPort(h, strconv.Itoa(c.port+3))
		penv := append(append([]string(nil), env...), "STREAMSHIFT_CLUSTER_LISTEN="+clusterListen)
		if instanceEnv != nil {
			more, err := instanceEnv(i, h, clusterListen)
			if err != nil {
				return nil, err
			}
			penv = append(penv, more...)
		}
		p := &streamshiftProc{t: t, bin: bin, dir: pdir, env: penv, listen: listen, probe: probe, args: []string{"run", "--upstream", upstream,
			"--listen", listen, "--advertised-host", adv, "--node-port-base", strconv.Itoa(c.port), "--node-id-min", "1", "--node-id-max", "1",
			"--admin-listen", c.admin[i], "--proxy-id", fmt.Sprintf("s%d", i+1), "--shutdown-timeout", "10s", "--log-level", logLevel}}
		if err := p.start(ctx); err != nil {
			return nil, err
		}
		c.procs[i] = p
		t.Cleanup(p.stop)
	}
	return c, c.settled(ctx, 0, 1, 2)
}

// bootstrap is what the apps connect to: all three instances.
func (c *ssCluster) bootstrap() string {
	var out []string
	for _, h := range c.hosts {
		out = append(out, net.JoinHostPort(h, strconv.Itoa(c.port)))
	}
	return strings.Join(out, ",")
}

// ssView is an instance's /cluster.
type ssView struct {
	Instances map[string]json.RawMessage `json:"instances"`
	Owners    []string                   `json:"owners"`
	// Links are the instance's links by peer (proxy/peer.LinkStatus).
	Links map[string]struct {
		Up bool `json:"up"`
	} `json:"links"`
	Partitions []struct {
		Partition int32  `json:"partition"`
		State     string `json:"state"`
	} `json:"partitions"`
}

func (c *ssCluster) view(ctx context.Context, i int) (ssView, error) {
	var v ssView
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.admin[i]+"/cluster", nil)
	if err != nil {
		return v, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	return v, json.NewDecoder(resp.Body).Decode(&v)
}

// settled waits until the live instances agree on a complete owner map of
// exactly themselves and each serves (has loaded) what it owns.
func (c *ssCluster) settled(ctx context.Context, live ...int) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		last = func() error {
			var owners []string
			for _, i := range live {
				v, err := c.view(ctx, i)
				if err != nil {
					return err
				}
				if len(v.Instances) != len(live) || len(v.Owners) != instancesLogPartitions {
					return fmt.Errorf("s%d sees %d instances, %d partitions", i+1, len(v.Instances), len(v.Owners))
				}
				if owners != nil && strings.Join(owners, ",") != strings.Join(v.Owners, ",") {
					return fmt.Errorf("owner maps differ: %v vs %v", owners, v.Owners)
				}
				owners = v.Owners
				loaded := map[int32]bool{}
				for _, s := range v.Partitions {
					loaded[s.Partition] = s.State == "loaded"
				}
				for p, o := range v.Owners {
					if o == "" || (o == fmt.Sprintf("s%d", i+1)) != loaded[int32(p)] {
						return fmt.Errorf("s%d: partition %d owner %q, loaded here %t", i+1, p, o, loaded[int32(p)])
					}
				}
			}
			return nil
		}()
		if last == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the streamshift instances did not settle: %v", last)
}

// owner is the index of the instance owning group, asked of instance i.
func (c *ssCluster) owner(ctx context.Context, i int, group string) (int, error) {
	v, err := c.view(ctx, i)
	if err != nil {
		return 0, err
	}
	p := coordinator.PartitionFor(group, instancesLogPartitions)
	if int(p) >= len(v.Owners) || v.Owners[p] == "" {
		return 0, fmt.Errorf("no owner of partition %d in s%d's map %v", p, i+1, v.Owners)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(v.Owners[p], "s"))
	return n - 1, err
}

// describeAt sends StreamsGroupDescribe for group to instance i's node port.
func (c *ssCluster) describeAt(ctx context.Context, i int, group string) (kmsg.StreamsGroupDescribeResponseGroup, error) {
	return describeStreamsGroup(ctx, net.JoinHostPort(c.hosts[i], strconv.Itoa(c.port+1)), group)
}

// checkStatusPage loads instance i's /ui?group=group in headless chromium
// and checks its DOM: the live instances (proxy id, advertised host, alive,
// i marked as this one), the owner map as /cluster has it, owner as the
// group's owner, and, at the owner, the group served with its owner; a
// screenshot goes to the test's folder as ui-<name>.png.
func (c *ssCluster) checkStatusPage(ctx context.Context, r *harness.Run, chromium string, i int, group string, owner int, live []int, name string) error {
	v, err := c.view(ctx, i)
	if err != nil {
		return err
	}
	url := "http://" + c.admin[i] + "/ui?group=" + group
	dom, err := chromiumDOM(ctx, chromium, url)
	if err != nil {
		return err
	}
	id := func(j int) string { return fmt.Sprintf("s%d", j+1) }
	p := coordinator.PartitionFor(group, instancesLogPartitions)
	wants := []string{`id="cluster" data-self="` + id(i) + `"`, id(i) + " (this instance)",
		fmt.Sprintf(`class="found" data-group="%s" data-partition="%d" data-owner="%s"`, group, p, id(owner))}
	for _, j := range live {
		wants = append(wants, fmt.Sprintf(`data-instance="%s" data-host="%s" data-state="alive"`, id(j), c.hosts[j]))
	}
	for q, o := range v.Owners {
		wants = append(wants, fmt.Sprintf(`data-partition="%d" data-owner="%s"`, q, o))
	}
	if i == owner {
		wants = append(wants, `data-group="`+group+`" data-served="true"`, `class="owner" data-owner="`+id(owner)+`"`, `data-protocol="streams"`)
	}
	for _, w := range wants {
		if !strings.Contains(dom, w) {
			return fmt.Errorf("s%d's /ui lacks %s", i+1, w)
		}
	}
	if n := strings.Count(dom, `<tr class="instance`); n != len(live) {
		return fmt.Errorf("s%d's /ui lists %d instances, want %d", i+1, n, len(live))
	}
	shot := filepath.Join(r.Dir, "ui-"+name+".png")
	if err := chromiumScreenshot(ctx, chromium, url, shot); err != nil {
		return err
	}
	r.T.Logf("s%d's status page checked in headless Chromium: group %s owned by s%d; screenshot %s", i+1, group, owner+1, shot)
	return nil
}

// others are the instances but i.
func others(i int) []int {
	var out []int
	for j := 0; j < 3; j++ {
		if j != i {
			out = append(out, j)
		}
	}
	return out
}

// TestStreamsProxyInstances: a Kafka Streams 4.4 app on the streams
// protocol, exactly once, under continuous input, runs through three
// streamshift instances sharing one durable group log in front of Kafka
// 3.9, its instances bootstrapping to all three. Sub-scenarios on one
// broker and one run: (1) the instance owning the group is killed -9
// mid-run: the app keeps running on the others (the report's "all tasks
// running" of that step is the time until every task runs again); (3) the
// owner is stopped (SIGSTOP) longer than its instance-group session, then
// resumed: a newer owner fenced it, and only the new owner serves the
// group; (4) a rolling restart of all three instances. The output is
// verified exactly, and no task is active on two app instances at once.
// The status page (/ui) of the instances, in headless Chromium, shows the
// instances and the group's owner before the kill and the new owner after.
// Kafka's admin tools through an instance not owning the group answer for
// it and for a plain consumer group (checkToolsThrough).
func TestStreamsProxyInstances(t *testing.T) {
	t.Parallel()
	const group = "e2e-count"
	chromium := needChromium(t)
	var c *ssCluster
	var killed int
	harness.RunScenario(t, harness.Scenario{
		Name:          "streams through three streamshift instances on 3.9",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App44,
		GroupProtocol: "streams",
		Guarantee:     "exactly_once_v2",
		Hold:          5 * time.Second,
		Route: func(ctx context.Context, r *harness.Run) (string, error) {
			var err error
			c, err = startSSCluster(ctx, r.T, r.Dir, r.Broker.Bootstrap, "", nativeTestSettings...)
			if err != nil {
				return "", err
			}
			return c.bootstrap(), nil
		},
		Steps: []harness.Step{
			harness.StartInstances("a1", "a2"),
			{Name: "the status pages show the three instances and the group's owner", Check: true, Do: func(ctx context.Context, r *harness.Run) error {
				o, err := c.owner(ctx, 0, group)
				if err != nil {
					return err
				}
				if err := c.checkStatusPage(ctx, r, chromium, o, group, o, []int{0, 1, 2}, "owner"); err != nil {
					return err
				}
				return c.checkStatusPage(ctx, r, chromium, others(o)[0], group, o, []int{0, 1, 2}, "other")
			}},
			{Name: "Kafka's admin tools through an instance not owning the group", Check: true, Do: func(ctx context.Context, r *harness.Run) error {
				o, err := c.owner(ctx, 0, group)
				if err != nil {
					return err
				}
				return c.checkToolsThrough(ctx, r.Dir, others(o)[0], group, o)
			}},
			{Name: "kill -9 the streamshift instance owning the group", Do: func(ctx context.Context, r *harness.Run) error {
				o, err := c.owner(ctx, 0, group)
				if err != nil {
					return err
				}
				killed = o
				r.T.Logf("group %s is owned by s%d: killing it", group, o+1)
				c.procs[o].kill9()
				return nil
			}},
			{Name: "the status page shows the new owner", Check: true, Do: func(ctx context.Context, r *harness.Run) error {
				rest := others(killed)
				if err := c.settled(ctx, rest...); err != nil {
					return err
				}
				next, err := c.owner(ctx, rest[0], group)
				if err != nil {
					return err
				}
				if next == killed {
					return fmt.Errorf("the killed s%d still owns group %s", killed+1, group)
				}
				return c.checkStatusPage(ctx, r, chromium, next, group, next, rest, "new-owner")
			}},
			{Name: "start the killed instance again", Do: func(ctx context.Context, r *harness.Run) error {
				if err := c.procs[killed].start(ctx); err != nil {
					return err
				}
				return c.settled(ctx, 0, 1, 2)
			}},
			{Name: "SIGSTOP the owner past its instance session, SIGCONT", Do: func(ctx context.Context, r *harness.Run) error {
				o, err := c.owner(ctx, 0, group)
				if err != nil {
					return err
				}
				rest := others(o)
				r.T.Logf("group %s is owned by s%d: stopping it", group, o+1)
				if err := c.procs[o].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
					return err
				}
				// The others take its partitions once its session passed.
				if err := c.settled(ctx, rest...); err != nil {
					_ = c.procs[o].cmd.Process.Signal(syscall.SIGCONT)
					return err
				}
				next, err := c.owner(ctx, rest[0], group)
				if err != nil {
					_ = c.procs[o].cmd.Process.Signal(syscall.SIGCONT)
					return err
				}
				if err := c.procs[o].cmd.Process.Signal(syscall.SIGCONT); err != nil {
					return err
				}
				// Resumed, the zombie serves the group no more: its next
				// write was fenced, or it learnt its membership lapsed.
				// It has not loaded the group's partition, and its map
				// names the new owner (its requests of the group go
				// there).
				p := coordinator.PartitionFor(group, instancesLogPartitions)
				deadline := time.Now().Add(60 * time.Second)
				for {
					v, err := c.view(ctx, o)
					loaded := false
					for _, s := range v.Partitions {
						loaded = loaded || (s.Partition == p && s.State == "loaded")
					}
					now, oerr := c.owner(ctx, o, group)
					if err == nil && oerr == nil && !loaded && now == next {
						break
					}
					if time.Now().After(deadline) {
						return fmt.Errorf("the resumed s%d still serves group %s: %+v %v %v", o+1, group, v, err, oerr)
					}
					time.Sleep(100 * time.Millisecond)
				}
				g, err := c.describeAt(ctx, next, group)
				if err != nil || g.ErrorCode != 0 || len(g.Members) == 0 {
					return fmt.Errorf("the new owner s%d does not serve group %s: %+v %v", next+1, group, g, err)
				}
				return c.settled(ctx, 0, 1, 2)
			}},
			{Name: "rolling restart of the three streamshift instances", Do: func(ctx context.Context, r *harness.Run) error {
				for i := range c.procs {
					c.procs[i].stop()
					if err := c.settled(ctx, others(i)...); err != nil {
						return fmt.Errorf("after stopping s%d: %w", i+1, err)
					}
					if err := c.procs[i].start(ctx); err != nil {
						return err
					}
					if err := c.settled(ctx, 0, 1, 2); err != nil {
						return fmt.Errorf("after restarting s%d: %w", i+1, err)
					}
				}
				return nil
			}},
			{Name: "no task was active on two app instances at once", Do: func(ctx context.Context, r *harness.Run) error {
				var events []harness.Event
				for _, name := range []string{"a1", "a2"} {
					a, err := r.App(name)
					if err != nil {
						return err
					}
					events = append(events, a.Events()...)
				}
				// The apps poll their task sets every 100 ms: shorter
				// overlaps are the polling's.
				if ov := harness.ActiveOverlaps(events, nil, time.Now()); len(ov) > 0 && ov[0].Dur > 300*time.Millisecond {
					return fmt.Errorf("%s", ov[0])
				}
				return nil
			}},
		},
	})
}
