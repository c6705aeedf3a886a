package proxy

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Every client connection holds two descriptors: its own socket and its
// upstream connection's (TLS on either side adds none). The connection
// limit leaves room for everything else the process opens. Running out
// anyway is not fatal: the accept loops (listen.go) pause and accept again
// on EMFILE, where gnet's own acceptor would stop the engine for good.
const (
	fdsPerClient = 2
	// fdsReserved covers what is not a client connection: the event loops'
	// pollers and wake descriptors, the control-plane clients of the proxy,
	// the coordinator and the instance group, the admin listener and its
	// clients, capture files, TLS files being re-read.
	fdsReserved = 256
	// defaultSomaxconn is Linux's net.core.somaxconn since 5.4.
	defaultSomaxconn = 4096
)

// raiseFileLimit raises the soft RLIMIT_NOFILE to the hard one and returns
// the soft limit in force. Go (1.19 and later) already raises it to one
// below the hard limit when the process starts; this takes the last one
// and covers a limit lowered since (prlimit).
func raiseFileLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = raised.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			lim = raised
		}
	}
	return uint64(lim.Cur), nil
}

// acceptBacklog is how many connections the kernel queues on a listener
// (Go listens with net.core.somaxconn). The accept loops take them one at
// a time and close a refused one at once, so they no longer hold a
// descriptor each; the term stays in the default limit as a margin (it
// kept gnet's acceptor, which took a whole burst before the limit ran,
// clear of EMFILE) so that the default does not change.
func acceptBacklog() int {
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	if err != nil {
		return defaultSomaxconn
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return defaultSomaxconn
	}
	return n
}

// maxConnectionsFor is the default of limits.max-connections for a
// descriptor limit: (limit − 256 − listeners − min(somaxconn, limit/4)) / 2,
// at least 1.
func maxConnectionsFor(limit uint64, listeners, backlog int) int {
	const most = 1 << 30 // an unlimited (RLIM_INFINITY) hard limit
	l := int(min(limit, most))
	n := (l - fdsReserved - listeners - min(backlog, l/4)) / fdsPerClient
	return max(n, 1)
}
