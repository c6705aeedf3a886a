package capture

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The connections of members (format 2): the timeline tells a task whose
// owner stopped from one its owner runs by the owner's connection. The
// recorder writes an "opened" line before the first member request of a
// client connection (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, a
// group heartbeat, OffsetCommit: the coordinator connection of a consumer,
// not the ones that only asked FindCoordinator) and a "closed" line when
// that connection closes, with the proxy's reason. Connections that never
// carried a member request get no lines: a consumer's fetch and
// bootstrap connections would bury the two that matter.

// memberKeys are the requests of a group's member on its coordinator
// connection.
var memberKeys = []int16{int16(kmsg.JoinGroup), int16(kmsg.SyncGroup), int16(kmsg.Heartbeat), int16(kmsg.LeaveGroup),
	int16(kmsg.OffsetCommit), int16(kmsg.ConsumerGroupHeartbeat), int16(kmsg.StreamsGroupHeartbeat)}

// ConnClose is a client connection's close, as the proxy tells it.
type ConnClose struct {
	ConnID        uint64
	ClientAddress string
	ClientID      string
	At            time.Time
	Reason        string
}

// maxMemberConns bounds the connections the writer remembers, above the
// proxy's connection limit of a large host (a close line lost past it).
const maxMemberConns = 1 << 16

// memberConn is a connection that carried a member request.
type memberConn struct {
	groups   []string
	clientID string
	addr     string
}

// ConnClosed queues a client connection's close; it never blocks. Only
// the closes of connections that carried a member request are written.
func (r *Recorder) ConnClosed(c ConnClose) {
	if r.keys.Load() == nil {
		return // nothing captured: the connection is not known
	}
	select {
	case r.in <- item{closed: &c}:
	default:
		r.m.dropped.Inc()
	}
}

// noteConn writes the "opened" line of a connection's first member
// request (before its exchange line), on the writer's goroutine.
func (r *Recorder) noteConn(d *decoded, x *Exchange, buf []byte) []byte {
	if len(d.line.Groups) == 0 || !slices.Contains(memberKeys, x.Key) {
		return buf
	}
	if mc := r.conns[x.ConnID]; mc != nil {
		for _, g := range d.line.Groups {
			if !slices.Contains(mc.groups, g) {
				mc.groups = append(mc.groups, g)
			}
		}
		return buf
	}
	if len(r.conns) >= maxMemberConns {
		for id := range r.conns {
			delete(r.conns, id) // its close line will be missing
			break
		}
	}
	r.conns[x.ConnID] = &memberConn{groups: slices.Clone(d.line.Groups), clientID: d.line.ClientID, addr: x.ClientAddress}
	at := x.Opened
	if at.IsZero() {
		at = x.Received
	}
	l := Line{Type: TypeConnection, Event: ConnOpened, Wall: at, MonoNs: at.Sub(r.start).Nanoseconds(), Instance: r.o.Instance,
		ConnID: x.ConnID, ClientAddress: x.ClientAddress, ClientID: d.line.ClientID, Groups: d.line.Groups}
	buf = r.marshal(buf[:0], &l)
	r.writeConn(l.Groups, at, buf)
	return buf
}

// closeConn writes a member connection's "closed" line.
func (r *Recorder) closeConn(c *ConnClose, buf []byte) []byte {
	mc := r.conns[c.ConnID]
	if mc == nil {
		return buf
	}
	delete(r.conns, c.ConnID)
	l := Line{Type: TypeConnection, Event: ConnClosed, Wall: c.At, MonoNs: c.At.Sub(r.start).Nanoseconds(), Instance: r.o.Instance,
		ConnID: c.ConnID, ClientAddress: mc.addr, ClientID: mc.clientID, Groups: mc.groups, Reason: c.Reason}
	buf = r.marshal(buf[:0], &l)
	r.writeConn(l.Groups, c.At, buf)
	return buf
}

// writeConn writes a connection line to the file (when it captures one of
// groups) and to the flight recorders of groups.
func (r *Recorder) writeConn(groups []string, at time.Time, line []byte) {
	if len(line) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.file != nil && (len(r.groups) == 0 || slices.ContainsFunc(groups, func(g string) bool { return r.groups[g] })) {
		r.writeFile(line)
	}
	for _, g := range groups {
		if fr := r.flights[g]; fr != nil {
			fr.add(at, slices.Clone(line))
		}
	}
}
