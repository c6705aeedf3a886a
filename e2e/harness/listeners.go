package harness

// OwnListenerEnv are the STREAMSHIFT_* variables that keep one `streamshift
// run` off every fixed default port, so tests running at the same time
// (E2E_PARALLEL) never collide on one: no admin listener (admin-listen,
// 127.0.0.1:19080 by default). The internal listener (cluster.listen,
// bound with the durable log) takes a free port by default (the listen
// host, port 0) and needs nothing here. A test that reads the admin
// endpoints or names the internal listener sets them itself: put these
// first, as a later variable or a flag wins.
func OwnListenerEnv() ([]string, error) {
	return []string{"STREAMSHIFT_ADMIN_LISTEN="}, nil
}
