package capture

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
)

// Members by a name a person recognises (issue #39). A Kafka Streams
// thread's consumer has the client id
// <application.id>-<process UUID>-StreamThread-N-consumer, the same under
// both protocols; a streams member also sends its process id and its
// application.server endpoint. A lane is labelled host/processUUID[:8]
// thread N: the host from its endpoint, else its connection's address;
// the process id from its heartbeats, else its client id, so that a
// process keeps its label across its switch from classic to streams. An
// operator's names file (--names) replaces host/processUUID[:8] by a name
// of theirs.

// streamsClientID matches a Kafka Streams consumer's client id: the
// application id, the process UUID and the thread number.
var streamsClientID = regexp.MustCompile(`^(.*)-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-StreamThread-([0-9]+)-(?:consumer|restore-consumer)$`)

// laneIdentity is what names a lane: its process id, host and thread.
type laneIdentity struct {
	ProcessID, Host, Thread string
}

// noteIdentity keeps what an exchange tells about the lane's instance:
// the client id's process and thread, a heartbeat's process id and
// endpoint, and the client's address (the host when no endpoint says it).
func (ln *Lane) noteIdentity(l *Line, req map[string]any) {
	if m := streamsClientID.FindStringSubmatch(l.ClientID); m != nil {
		if ln.ProcessID == "" {
			ln.ProcessID = m[2]
		}
		ln.Thread = m[3]
	}
	if pid := str(req["processId"]); pid != "" {
		ln.ProcessID = pid
	}
	if ep, _ := req["userEndpoint"].(map[string]any); ep != nil && str(ep["host"]) != "" {
		ln.Host, ln.hostFromEndpoint = str(ep["host"]), true
	}
	if !ln.hostFromEndpoint && l.ClientAddress != "" {
		host, _, err := net.SplitHostPort(l.ClientAddress)
		if err != nil {
			host = l.ClientAddress
		}
		ln.Host = host
	}
}

// Names maps process ids (whole, or their first 8 characters), hosts or
// client ids to names an operator chose.
type Names map[string]string

// ReadNames reads a names file: one key=name a line, or a YAML map of
// key: name; blank lines and lines starting with # are skipped.
func ReadNames(name string, r io.Reader) (Names, error) {
	out := Names{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || line == "---" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			k, v, ok = strings.Cut(line, ": ")
		}
		k, v = strings.Trim(strings.TrimSpace(k), `"'`), strings.Trim(strings.TrimSpace(v), `"'`)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%s:%d: want key=name (a process id, a host or a client id), got %q", name, n, line)
		}
		out[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// instance is the operator's name of the lane's instance, else
// host/processUUID[:8], else "" (not a Kafka Streams client).
func (ln *Lane) instance(names Names) string {
	pid := ln.ProcessID
	for _, k := range []string{pid, short(pid), ln.Host, ln.ClientID} {
		if n := names[k]; k != "" && n != "" {
			return n
		}
	}
	if pid == "" {
		return ""
	}
	if ln.Host == "" {
		return short(pid)
	}
	return ln.Host + "/" + short(pid)
}

func short(pid string) string {
	if len(pid) > 8 {
		return pid[:8]
	}
	return pid
}

// label is what the lane is shown as: its instance and thread, or its
// client id when it is no Kafka Streams thread's.
func (ln *Lane) label(names Names) string {
	inst := ln.instance(names)
	switch {
	case inst == "":
		if n := names[ln.ClientID]; n != "" {
			return n
		}
		return ln.ClientID
	case ln.Thread == "":
		return inst
	default:
		return inst + " thread " + ln.Thread
	}
}

// SetNames labels the lanes with names (nil: none): Lane.Label.
func (t *Timeline) SetNames(names Names) {
	for _, ln := range t.Lanes {
		ln.Label = ln.label(names)
	}
}

// LabelOf is the label of a lane by its client id ("a,b" for several).
func (t *Timeline) LabelOf(clientIDs string) string {
	ids := strings.Split(clientIDs, ",")
	for i, id := range ids {
		for _, ln := range t.Lanes {
			if ln.ClientID == id && ln.Label != "" {
				ids[i] = ln.Label
			}
		}
	}
	return strings.Join(ids, ", ")
}
