// Package capture records what streamshift's clients and groups did, for
// debugging a migration after the fact: the exchanges the proxy's tap
// hands over (a request and its answer as the client saw them), written as
// lines of Kafka's JSON (recorder.go, body.go, line.go) to a rotating
// gzipped file (file.go) and to a per-group flight recorder kept in memory
// and dumped on an incident (flight.go, flight_files.go); the coordinator's
// and the migration's events beside them; the admin routes that start and
// stop a capture (admin.go); and the timeline that reads the lines back
// (timeline*.go: who owned which task when, what each step took).
//
// It owns its files, its memory bounds and its metrics, nothing else. It
// may not touch the traffic: it never answers, delays or changes a
// request (the tap's Wants is one atomic bit test on the proxy's loop;
// decoding and writing run on the recorder's own goroutine, and a full
// queue drops lines, counted, rather than slowing the proxy). It imports
// no proxy itself: cmd/streamshift adapts the tap and the coordinator's and
// migration's event hooks. The groups a request names are route.Groups,
// the one place each key's facts are written (route/keys.go); event kinds
// are named by their emitters' constants (coordinator/streams,
// migration).
package capture
