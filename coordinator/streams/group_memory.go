package streams

import (
	"time"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// GroupMemory is the part of a group's state that Kafka keeps in memory only:
// it is not in the records and starts afresh after a failover. The group's
// timers are the runtime's (coordinator/timers.go), as Kafka's are.
type GroupMemory struct {
	configured          *configuredTopology
	configuredVersion   uint64             // metadata image version it was computed from
	configuredHash      uint64             // metadata hash of the topology topics in that image
	configuredFor       *topology.Topology // the topology it was computed for
	EndpointEpoch       int32
	shutdownRequester   string
	creatingTopics      map[string]bool
	topicCreationErrors map[string]topicCreationError
	HandBack            *HandBack // classic_handback.go; nil when none runs
	// sessionScan: no session expiry needs watching before then
	// (heartbeat_session_expiry.go).
	sessionScan time.Time
	// successorUntil: a departed member's successor is expected until
	// then (successor_watch.go); zero when none is.
	successorUntil time.Time
	// successor: the member whose join ended the latest watch.
	successor string
	// conns: member id -> the connection of its latest group request
	// (member_conn.go); warnedTwins: process ids already warned about as
	// used by two live members (replace.go).
	conns       map[string]memberConn
	warnedTwins map[string]bool
	// watched: the connections whose close the runtime watches for this
	// group (Change.Watch), until it reports it (ConnClosed) or no member
	// references them (UnwatchUnused, conn_watch.go); connLeft: a member
	// left a known connection since UnwatchUnused last looked.
	watched  map[<-chan struct{}]bool
	connLeft bool
}

// memberConn is a client connection as ClientInfo names it, and the
// cadence of a classic member's heartbeats seen on any connection
// (disconnect_expiry.go).
type memberConn struct {
	id     uint64
	closed <-chan struct{}
	// closeTime: when closed closed (ClientInfo.ClosedAt; nil: unknown).
	closeTime func() time.Time
	// lastHeartbeat: the member's latest classic Heartbeat since its
	// latest JoinGroup or SyncGroup (zero: none); maxGap: the largest
	// gap seen between two consecutive ones.
	lastHeartbeat time.Time
	maxGap        time.Duration
	// unseen: a member a takeover carried whose requests this instance
	// never saw, fenced unless one comes (unseen_expiry.go).
	unseen bool
}

type topicCreationError struct {
	Msg   string
	until time.Time
}

// HandBack is the in-memory state of a hand-back barrier (migration/doc.go,
// "Hand-back"). It is not in the records: after a failover no hand-back
// runs, and the proxy starts it again.
type HandBack struct {
	Held    map[string]bool // classic members whose JoinGroup is held
	Aborted bool            // a streams-protocol member joined
	// OnBarrier is BeginHandBack's: told once the barrier ends
	// (barrierEnded), while the group's queue points at this hand-back.
	OnBarrier func(HandBackState)
}

// HandBackState is what BeginHandBack's onBarrier is told when the barrier
// ends, and what HandBack reports.
type HandBackState struct {
	Running bool // a barrier is up (or was aborted and not yet cleared)
	// Ready: every member of the group is a classic member whose
	// JoinGroup is held; FinishHandBack may run.
	Ready bool
	// Aborted: a streams-protocol member joined; AbortHandBack, then run
	// the held JoinGroups again.
	Aborted bool
	Held    []string
}
