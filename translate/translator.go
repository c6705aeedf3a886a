package translate

import (
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// Coordinator is what the translator needs of the streams-group coordinator
// (*coordinator.Coordinator implements it). Every callback is called once.
type Coordinator interface {
	// Clock is the coordinator's: pending member ids run on it, as the
	// members' sessions do.
	coordinator.Clock
	ClassicJoinGroup(streams.ClassicJoinRequest, func(streams.ClassicJoinResult))
	ClassicSyncGroup(streams.ClassicSyncRequest, func(streams.ClassicSyncResult))
	ClassicHeartbeat(streams.ClassicHeartbeatRequest, func(error))
	ClassicLeaveGroup(groupID string, members []streams.ClassicLeaveMember, done func([]error, error))
	// TopicsCreated reports the creation of the internal topics a join or
	// sync returned (coordinator.Coordinator.TopicsCreated).
	TopicsCreated(groupID string, names []string, failed map[string]error)
}

// CreateTopics creates the internal topics a classic join or sync of group
// found missing, if the member may (the route authorizes it on its
// connection), and reports the outcome to the coordinator (TopicsCreated).
// A nil CreateTopics creates none: they are reported not created.
type CreateTopics func(group string, topics []streams.CreatableTopic)

// create hands the topics a join or sync of group returned to create.
func (t *Translator) create(group string, topics []streams.CreatableTopic, create CreateTopics) {
	if len(topics) == 0 {
		return
	}
	if create == nil {
		t.c.TopicsCreated(group, coordinator.TopicNames(topics), nil)
		return
	}
	create(group, topics)
}

// HandBack is the online migration's hand-back (migration.HandBack), which
// the translator tells of the classic members it serves. Its methods must
// not block: they are called on coordinator goroutines.
type HandBack interface {
	// AfterHeartbeat: a classic Heartbeat of the group was answered
	// without an error, or REBALANCE_IN_PROGRESS; the group may be left
	// with classic members only.
	AfterHeartbeat(group string)
	// Hold takes a JoinGroup the coordinator holds at a hand-back's
	// barrier (streams.ErrHandBackHeld): the hand-back answers it, or
	// forwards it, once the barrier ends.
	Hold(HeldJoin)
}

// HeldJoin is a classic JoinGroup held at a hand-back's barrier, with what
// it takes to serve it later (Translator.JoinGroup) or send it upstream.
type HeldJoin struct {
	Req     *kmsg.JoinGroupRequest
	Client  streams.ClientInfo
	Respond func(*kmsg.JoinGroupResponse)
	Create  CreateTopics
	Forward Forward
}

// Options configure a Translator.
type Options struct {
	Coordinator Coordinator
	// MinSessionTimeout and MaxSessionTimeout bound a classic member's
	// session timeout (Kafka's group.min/max.session.timeout.ms, defaults
	// 6 s and 30 min).
	MinSessionTimeout, MaxSessionTimeout time.Duration
	// NewMemberID makes a member id; the default is Kafka's
	// "<client id>-<uuid>".
	NewMemberID func(clientID string) string
	// HandBack, if set, hands groups left with classic members only back
	// to the upstream; nil: they stay streams groups, and a JoinGroup held
	// at a barrier (a log written with the hand-back on) is told to rejoin.
	HandBack HandBack
	// Log gets what the translator warns of: a member of a release older
	// than the tested range.
	Log zerolog.Logger
}

// Translator serves the classic group APIs (JoinGroup 11, Heartbeat 12,
// LeaveGroup 13, SyncGroup 14) of classic Kafka Streams members whose group
// is a streams group served by the coordinator. Requests for any other
// group are handed back to the caller (forward) unchanged, to go upstream.
type Translator struct {
	c    Coordinator
	opts Options

	// pending holds the member ids given out with MEMBER_ID_REQUIRED
	// until their first JoinGroup, or until a session timeout passes (the
	// classic coordinator's pending members).
	mu      sync.Mutex
	pending map[string]time.Time
}

// New returns a Translator.
func New(opts Options) *Translator {
	if opts.MinSessionTimeout == 0 {
		opts.MinSessionTimeout = 6 * time.Second
	}
	if opts.MaxSessionTimeout == 0 {
		opts.MaxSessionTimeout = 30 * time.Minute
	}
	if opts.NewMemberID == nil {
		opts.NewMemberID = newMemberID
	}
	return &Translator{c: opts.Coordinator, opts: opts, pending: map[string]time.Time{}}
}

// addPending remembers a member id given out, for one session timeout.
func (t *Translator) addPending(id string, session time.Duration) {
	now := t.c.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, until := range t.pending {
		if now.After(until) {
			delete(t.pending, k)
		}
	}
	t.pending[id] = now.Add(session)
}

// isPending reports whether id was given out and is still pending.
func (t *Translator) isPending(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	until, ok := t.pending[id]
	return ok && !t.c.Now().After(until)
}

// dropPending forgets an id once its member joined.
func (t *Translator) dropPending(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.pending, id)
}

// Forward sends a request upstream on the connection it arrived on, so the
// broker sees the client's own principal and client id. With rewritten nil
// the request goes as it came; otherwise rewritten (the same API) goes in its
// place. answered, if not nil, gets the upstream's answer before the client
// does; it is not called if the client's connection closes first.
type Forward func(rewritten kmsg.Request, answered func(kmsg.Response))

// Handle is Serve for a caller that creates no internal topics.
func (t *Translator) Handle(req kmsg.Request, client streams.ClientInfo, respond func(kmsg.Response), forward Forward) bool {
	return t.Serve(req, client, respond, nil, forward)
}

// Serve serves req if it is a classic group request; it reports whether it
// took it. It never blocks. Exactly one of respond and forward is called,
// later, possibly on a coordinator goroutine (neither may block): forward
// when the group is not a streams group served here. The internal topics a
// join or sync finds missing go to create, before respond.
func (t *Translator) Serve(req kmsg.Request, client streams.ClientInfo, respond func(kmsg.Response), create CreateTopics, forward Forward) bool {
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		t.JoinGroup(r, client, func(resp *kmsg.JoinGroupResponse) { respond(resp) }, create, forward)
	case *kmsg.SyncGroupRequest:
		t.SyncGroup(r, client, func(resp *kmsg.SyncGroupResponse) { respond(resp) }, create, forward)
	case *kmsg.HeartbeatRequest:
		t.Heartbeat(r, client, func(resp *kmsg.HeartbeatResponse) { respond(resp) }, forward)
	case *kmsg.LeaveGroupRequest:
		t.LeaveGroup(r, func(resp *kmsg.LeaveGroupResponse) { respond(resp) }, forward)
	default:
		return false
	}
	return true
}

// errorCode gives the Kafka error code and message of a coordinator error.
func errorCode(err error) (int16, *string) {
	if err == nil {
		return 0, nil
	}
	msg := err.Error()
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code, &msg
	}
	return kerr.UnknownServerError.Code, &msg
}

func newMemberID(clientID string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", clientID, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
