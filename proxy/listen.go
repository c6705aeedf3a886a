package proxy

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
)

// probeListeners binds and closes each listen address in turn, so a taken
// or unavailable one is an error naming it and its node: gnet returns the
// error of the setsockopt that follows a failed bind ("bad file
// descriptor"), with no address. Go's listeners set SO_REUSEADDR as gnet's
// do (WithReuseAddr), so a port held only by connections in TIME_WAIT
// passes here as it does there.
func (p *Proxy) probeListeners() error {
	for i, addr := range p.listenAddrs() {
		hostPort := strings.TrimPrefix(addr, "tcp://")
		what := "bootstrap"
		if i > 0 {
			what = "node " + strconv.Itoa(int(p.opts.NodeIDMin)+i-1)
		}
		ln, err := net.Listen("tcp", hostPort)
		if err != nil {
			var errno syscall.Errno
			if errors.As(err, &errno) {
				return fmt.Errorf("listen %s (%s): %w", hostPort, what, errno)
			}
			return fmt.Errorf("listen %s (%s): %w", hostPort, what, err)
		}
		if err := ln.Close(); err != nil {
			return fmt.Errorf("listen %s (%s): close the probe: %w", hostPort, what, err)
		}
	}
	return nil
}
