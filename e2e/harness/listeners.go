package harness

import (
	"fmt"
	"strconv"
)

// OwnListenerEnv are the STREAMSHIFT_* variables that keep one `streamshift
// run` off every fixed default port, so tests running at the same time
// (E2E_PARALLEL) never collide on one: no admin listener (admin-listen,
// 127.0.0.1:19080 by default) and the internal listener (cluster.listen,
// the listen host's port 19091 by default, bound with the durable log) on a
// free port. A test that reads the admin endpoints or names the internal
// listener sets them itself: put these first, as a later variable or a flag
// wins. They are chosen once per process and kept across its restarts.
func OwnListenerEnv() ([]string, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return nil, fmt.Errorf("internal listener port: %w", err)
	}
	return []string{
		"STREAMSHIFT_ADMIN_LISTEN=",
		"STREAMSHIFT_CLUSTER_LISTEN=127.0.0.1:" + strconv.Itoa(ports[0]),
	}, nil
}
