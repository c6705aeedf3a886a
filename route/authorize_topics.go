package route

import (
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/proxy"
)

// Kafka 4.4 creates a streams group's missing internal topics only for a
// client that may CREATE them: after its group coordinator answered a
// heartbeat with topics to create, KafkaApis checks CREATE on the cluster,
// else on each topic, and if any is denied creates none of them and adds
// "Unauthorized to CREATE on topics a, b." to the MISSING_INTERNAL_TOPICS
// status detail. streamshift's coordinator asks its TopicCreator, which runs
// with the control plane's principal; InternalTopicGate sits in front of it
// and holds every creation until a heartbeat's route has asked the broker,
// on that member's own connection, whether the member's principal may
// create the topics (CreateTopics with validate_only), then lets it through
// or drops it (the coordinator asks again on a later heartbeat, as Kafka's
// does on every heartbeat that finds them missing).

// maxHeldCreations bounds the creations held at once; beyond, the oldest
// is dropped (its group asks again on its next heartbeat).
const maxHeldCreations = 4096

// InternalTopicGate is the coordinator's TopicCreator that waits for a
// client's authorization (see above).
type InternalTopicGate struct {
	inner coordinator.TopicCreator

	mu   sync.Mutex
	held []*heldCreation
}

// heldCreation is one CreateTopics call of the coordinator (one group's
// missing topics) awaiting a decision.
type heldCreation struct {
	topics []streams.CreatableTopic
	done   func(map[string]error)
}

// NewInternalTopicGate returns a gate in front of inner.
func NewInternalTopicGate(inner coordinator.TopicCreator) *InternalTopicGate {
	return &InternalTopicGate{inner: inner}
}

// CreateTopics holds the creation until a route decides (decide).
func (g *InternalTopicGate) CreateTopics(topics []streams.CreatableTopic, done func(map[string]error)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.held) >= maxHeldCreations {
		dropped := g.held[0]
		g.held = g.held[1:]
		go dropped.done(nil)
	}
	g.held = append(g.held, &heldCreation{topics: topics, done: done})
}

// take removes and returns the held creations of group: those naming a
// topic of its internal-topic prefix (Kafka Streams names them
// "<application.id>-...") or one of names.
func (g *InternalTopicGate) take(group string, names []string) []*heldCreation {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*heldCreation
	keep := g.held[:0]
	for _, h := range g.held {
		if slices.ContainsFunc(h.topics, func(t streams.CreatableTopic) bool {
			return strings.HasPrefix(t.Name, group+"-") || slices.Contains(names, t.Name)
		}) {
			out = append(out, h)
		} else {
			keep = append(keep, h)
		}
	}
	clear(g.held[len(keep):])
	g.held = keep
	return out
}

// authorizeCreation decides the held creations of group for the client of
// req, after the coordinator answered its heartbeat: all go to the inner
// creator if the client may CREATE every topic, else none, and the denied
// names are returned. A probe that got no answer leaves them to a later
// heartbeat.
func (rs *Routes) authorizeCreation(req *proxy.Request, held []*heldCreation) []string {
	var topics []string
	for _, h := range held {
		for _, t := range h.topics {
			topics = append(topics, t.Name)
		}
	}
	denied, err := rs.auth.denied(req, kmsg.ACLResourceTypeTopic, kmsg.ACLOperationCreate, topics)
	if err != nil || len(denied) > 0 {
		if err != nil {
			rs.o.Log.Debug().Strs("topics", topics).Err(err).Msg("internal topics: no answer to the CREATE probe; left to a later heartbeat")
		}
		for _, h := range held {
			// Not created, and no error: the coordinator asks again on
			// a later heartbeat, as Kafka's does.
			go h.done(nil)
		}
		return denied
	}
	for _, h := range held {
		rs.o.TopicGate.inner.CreateTopics(h.topics, h.done)
	}
	return nil
}

// answerAfterCreation wraps the coordinator's answer to a group request
// of the client of req: creations of the group's internal topics the
// coordinator asked for meanwhile are decided for that client first (off
// the coordinator's goroutine: the probe is a round trip), and a streams
// heartbeat's answer gets Kafka 4.4's detail for the topics it may not
// create.
func (rs *Routes) answerAfterCreation(req *proxy.Request, group string, names []string, respond func(kmsg.Response)) func(kmsg.Response) {
	if rs.o.TopicGate == nil {
		return respond
	}
	return func(resp kmsg.Response) {
		held := rs.o.TopicGate.take(group, names)
		if len(held) == 0 {
			respond(resp)
			return
		}
		go func() {
			denied := rs.authorizeCreation(req, held)
			if hr, ok := resp.(*kmsg.StreamsGroupHeartbeatResponse); ok {
				withCreateDenied(hr, denied)
			}
			respond(resp)
		}()
	}
}

// withCreateDenied adds Kafka 4.4's detail for internal topics the member
// may not create to a heartbeat response.
func withCreateDenied(resp *kmsg.StreamsGroupHeartbeatResponse, denied []string) {
	if len(denied) == 0 {
		return
	}
	detail := "Unauthorized to CREATE on topics " + strings.Join(denied, ", ") + "."
	for i := range resp.Status {
		if resp.Status[i].StatusCode == statusMissingInternalTopics {
			resp.Status[i].StatusDetail += "; " + detail
			return
		}
	}
	st := kmsg.NewStreamsGroupHeartbeatResponseStatus()
	st.StatusCode, st.StatusDetail = statusMissingInternalTopics, detail
	resp.Status = append(resp.Status, st)
}

// statusMissingInternalTopics is KIP-1071's MISSING_INTERNAL_TOPICS status.
const statusMissingInternalTopics = 3

// internalTopicNames are the topics of a topology streamshift may have to
// create: changelog and repartition source topics.
func internalTopicNames(t *kmsg.StreamsGroupHeartbeatRequestTopology) []string {
	if t == nil {
		return nil
	}
	var out []string
	for _, s := range t.Subtopologies {
		for _, r := range s.RepartitionSourceTopics {
			out = append(out, r.Topic)
		}
		for _, c := range s.StateChangelogTopics {
			out = append(out, c.Topic)
		}
	}
	return out
}
