package harness

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"
)

// HAProxyInstall is how to get the HAProxy the one-address tests run.
const HAProxyInstall = "apt-get install -y haproxy (Debian's HAProxy 2.6)"

// LookHAProxy is the path of the haproxy binary, or an error with the
// install hint.
func LookHAProxy() (string, error) {
	path, err := exec.LookPath("haproxy")
	if err != nil {
		return "", fmt.Errorf("haproxy not installed (%s): %w", HAProxyInstall, err)
	}
	return path, nil
}

// HAProxyOptions configure StartHAProxy: HAProxy in TCP mode in front of
// several streamshift instances that listen on the same ports at their own
// addresses, as a load balancer or a Kubernetes Service in front of a
// StatefulSet.
type HAProxyOptions struct {
	Bin string // the haproxy binary (LookHAProxy)
	Dir string // its config, log and stats socket
	// Bind is the one address clients use (all instances advertise it).
	Bind string
	// Ports are every port a client connects to: the bootstrap port and
	// each node port. Each is bound on Bind and reaches an instance on the
	// same port.
	Ports   []int
	Servers []HAProxyServer
}

// HAProxyServer is one streamshift instance behind HAProxy.
type HAProxyServer struct {
	Name string // the server's name in HAProxy (its proxy id)
	// Host is its address without a port: HAProxy connects on the port
	// the client connected to.
	Host string
	// AdminPort is its admin listener's port: HAProxy's health check asks
	// GET /readyz there.
	AdminPort int
}

// HAProxy is a running haproxy process.
type HAProxy struct {
	Config string
	Log    string
	socket string
	p      *proc
}

// haproxyConfig is the configuration the README's "Behind a TCP load
// balancer" explains. The health check runs every 500 ms and two failures
// mark an instance down (about a second after a kill -9); a connection
// refused by a dead instance that is not marked down yet is sent to
// another (redispatch). Kafka connections are long-lived and a held
// JoinGroup is silent for up to the rebalance timeout: the tunnel timeout
// is an hour.
var haproxyConfig = template.Must(template.New("haproxy.cfg").Parse(`# streamshift behind HAProxy (e2e): written by e2e/harness/haproxy.go
global
    log stderr format raw local0 info
    stats socket {{.Socket}} mode 600 level admin
    maxconn 4096

defaults
    mode tcp
    log global
    option tcplog
    option redispatch
    retries 3
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h
    timeout check 1s

frontend kafka
{{- range .Ports}}
    bind {{$.Bind}}:{{.}}
{{- end}}
    default_backend streamshift

backend streamshift
    balance roundrobin
    option httpchk GET /readyz
    default-server inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions
{{- range .Servers}}
    server {{.Name}} {{.Host}} check port {{.AdminPort}}
{{- end}}
`))

// StartHAProxy writes the configuration, checks it (haproxy -c), runs
// haproxy in the foreground (stopped by its PID, killed if the test process
// dies) and waits until it answers on its stats socket.
func StartHAProxy(ctx context.Context, o HAProxyOptions) (*HAProxy, error) {
	if o.Bin == "" || o.Dir == "" || o.Bind == "" || len(o.Ports) == 0 || len(o.Servers) == 0 {
		return nil, fmt.Errorf("haproxy: Bin, Dir, Bind, Ports and Servers are required")
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("haproxy dir: %w", err)
	}
	h := &HAProxy{Config: filepath.Join(o.Dir, "haproxy.cfg"), Log: filepath.Join(o.Dir, "haproxy.log"), socket: filepath.Join(o.Dir, "admin.sock")}
	// A unix socket's path holds at most 107 bytes.
	if len(h.socket) > 100 {
		d, err := os.MkdirTemp("", "e2e-haproxy-")
		if err != nil {
			return nil, err
		}
		h.socket = filepath.Join(d, "admin.sock")
	}
	var cfg strings.Builder
	if err := haproxyConfig.Execute(&cfg, struct {
		HAProxyOptions
		Socket string
	}{o, h.socket}); err != nil {
		return nil, err
	}
	if err := os.WriteFile(h.Config, []byte(cfg.String()), 0o644); err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, o.Bin, "-c", "-f", h.Config).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("haproxy -c -f %s: %w\n%s", h.Config, err, out)
	}
	logf, err := os.Create(h.Log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.Bin, "-db", "-f", h.Config)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start haproxy: %w", err)
	}
	h.p = &proc{name: "haproxy", cmd: cmd, done: make(chan struct{})}
	go func() {
		h.p.err = cmd.Wait()
		logf.Close()
		close(h.p.done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := h.command("show info"); err == nil {
			return h, nil
		} else if h.p.exited() || time.Now().After(deadline) {
			_ = h.Stop()
			return nil, fmt.Errorf("haproxy did not start (log %s): %v", h.Log, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop stops haproxy by its PID: TERM, then KILL.
func (h *HAProxy) Stop() error {
	err := h.p.stop(10 * time.Second)
	if filepath.Dir(h.socket) != filepath.Dir(h.Config) {
		os.RemoveAll(filepath.Dir(h.socket))
	}
	return err
}

// command sends one command to the stats socket and returns its answer.
func (h *HAProxy) command(cmd string) (string, error) {
	c, err := net.DialTimeout("unix", h.socket, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, cmd+"\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// ServerStates is each server's status as HAProxy's health checks see it
// ("UP", "DOWN", "UP 1/2" while going down, ...), from `show stat`.
func (h *HAProxy) ServerStates() (map[string]string, error) {
	out, err := h.command("show stat")
	if err != nil {
		return nil, fmt.Errorf("haproxy show stat: %w", err)
	}
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(out, "# ")))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil || len(rows) == 0 {
		return nil, fmt.Errorf("haproxy show stat: %v\n%s", err, out)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	states := map[string]string{}
	for _, row := range rows[1:] {
		if len(row) <= col["status"] || row[col["pxname"]] != "streamshift" {
			continue
		}
		if sv := row[col["svname"]]; sv != "BACKEND" {
			states[sv] = row[col["status"]]
		}
	}
	return states, nil
}

// WaitServers waits until every named server has the state want ("UP" or
// "DOWN") in HAProxy's health checks.
func (h *HAProxy) WaitServers(ctx context.Context, want string, names ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var states map[string]string
	var err error
	for {
		if states, err = h.ServerStates(); err == nil {
			ok := true
			for _, n := range names {
				ok = ok && states[n] == want
			}
			if ok {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("haproxy: servers %v not %s: %v %v", names, want, states, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Sessions counts the client connections HAProxy holds per server now,
// from `show sess` ("srv=s1").
func (h *HAProxy) Sessions() (map[string]int, error) {
	bySrc, err := h.sessions()
	if err != nil {
		return nil, err
	}
	n := map[string]int{}
	for _, srv := range bySrc {
		n[srv]++
	}
	return n, nil
}

// ServersOf counts the connections of process pid that HAProxy holds, per
// server it sent them to: the process's TCP sockets (/proc/<pid>/fd) are
// found by their local port among HAProxy's sessions ("src=").
func (h *HAProxy) ServersOf(pid int) (map[string]int, error) {
	ports, err := localPorts(pid)
	if err != nil {
		return nil, err
	}
	bySrc, err := h.sessions()
	if err != nil {
		return nil, err
	}
	n := map[string]int{}
	for src, srv := range bySrc {
		_, port, err := net.SplitHostPort(src)
		if err == nil && ports[port] {
			n[srv]++
		}
	}
	return n, nil
}

// sessions maps each client connection's address (src=) to its server.
func (h *HAProxy) sessions() (map[string]string, error) {
	out, err := h.command("show sess")
	if err != nil {
		return nil, fmt.Errorf("haproxy show sess: %w", err)
	}
	bySrc := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var src, srv string
		for _, f := range strings.Fields(sc.Text()) {
			if v, ok := strings.CutPrefix(f, "src="); ok {
				src = v
			} else if v, ok := strings.CutPrefix(f, "srv="); ok {
				srv = v
			}
		}
		if src != "" && srv != "" && srv != "<none>" {
			bySrc[src] = srv
		}
	}
	return bySrc, sc.Err()
}

// localPorts are the local ports (decimal) of process pid's TCP sockets:
// its socket inodes (/proc/<pid>/fd) looked up in /proc/<pid>/net/tcp and
// tcp6.
func localPorts(pid int) (map[string]bool, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil {
			if ino, ok := strings.CutPrefix(l, "socket:["); ok {
				inodes[strings.TrimSuffix(ino, "]")] = true
			}
		}
	}
	ports := map[string]bool{}
	// A JVM's sockets are IPv6 ones, IPv4 addresses mapped (tcp6).
	for _, table := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			f := strings.Fields(line)
			if len(f) < 10 || !inodes[f[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(f[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil {
				ports[strconv.FormatUint(p, 10)] = true
			}
		}
	}
	return ports, nil
}
