package harness

import (
	"fmt"
	"net"
	"strconv"
)

// FreePortsOnHosts returns a port p such that p..p+n-1 are free on every
// host (loopback addresses such as 127.0.0.2: several streamshift
// instances on one machine listen on the same ports at their own address).
func FreePortsOnHosts(hosts []string, n int) (int, error) {
	for attempt := 0; attempt < 100; attempt++ {
		ports, err := FreePorts(1)
		if err != nil {
			return 0, err
		}
		port, free := ports[0], ports[0]+n <= 65536
		for _, h := range hosts {
			for off := 0; off < n && free; off++ {
				l, err := net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(port+off)))
				if err != nil {
					free = false
					break
				}
				l.Close()
			}
		}
		if free {
			return port, nil
		}
	}
	return 0, fmt.Errorf("no %d consecutive ports free on every host of %v", n, hosts)
}
