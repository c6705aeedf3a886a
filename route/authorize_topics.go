package route

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/proxy"
)

// Kafka 4.4 creates a streams group's missing internal topics only for a
// client that may CREATE them: its group coordinator returns the topics to
// create with the heartbeat's result (StreamsGroupHeartbeatResult's
// creatableTopics), and KafkaApis checks CREATE on the cluster, else on
// each topic; if any is denied it creates none of them and adds
// "Unauthorized to CREATE on topics a, b." to the MISSING_INTERNAL_TOPICS
// status detail. streamshift's operations return them the same way
// (coordinator.HeartbeatResult.CreatableTopics, and the results of a
// takeover and of a classic join or sync); the route asks the broker, on
// the member's own connection, whether the member's principal may create
// them (CreateTopics with validate_only), then creates them with the
// control plane's principal (Options.TopicCreator) or not, and reports the
// outcome to the coordinator, which until then counts them as being
// created and does not return them again.

// createInternalTopics authorizes the creation of the internal topics an
// operation of group returned for the client of req and starts it, then
// calls then with the names the client may not create (nil when none
// was denied, or nothing was to create). Without topics then runs at once;
// otherwise on a goroutine of its own (the probe is a round trip; the
// caller is on the group's queue). A probe that gets no answer leaves them
// to a later heartbeat, as a denial does.
func (rs *Routes) createInternalTopics(req *proxy.Request, group string, topics []streams.CreatableTopic, then func(denied []string)) {
	if len(topics) == 0 {
		then(nil)
		return
	}
	go func() {
		names := coordinator.TopicNames(topics)
		if rs.o.TopicCreator == nil {
			rs.o.Coordinator.TopicsCreated(group, names, nil)
			then(nil)
			return
		}
		denied, err := rs.auth.denied(req, kmsg.ACLResourceTypeTopic, kmsg.ACLOperationCreate, names)
		if err != nil || len(denied) > 0 {
			if err != nil {
				rs.o.Log.Debug().Strs("topics", names).Err(err).Msg("internal topics: no answer to the CREATE probe; left to a later heartbeat")
			}
			// Not created, and no error: a later heartbeat that
			// still finds them missing returns them again, as
			// Kafka's does.
			rs.o.Coordinator.TopicsCreated(group, names, nil)
			then(denied)
			return
		}
		rs.o.TopicCreator.CreateTopics(topics, func(failed map[string]error) {
			rs.o.Coordinator.TopicsCreated(group, names, failed)
		})
		then(nil)
	}()
}

// answerHeartbeat answers a streams heartbeat of the client of req once
// the internal topics its result names were decided for that client (see
// above), with Kafka 4.4's detail for those it may not create.
func (rs *Routes) answerHeartbeat(req *proxy.Request, group string, res coordinator.HeartbeatResult, respond func(kmsg.Response)) {
	rs.createInternalTopics(req, group, res.CreatableTopics, func(denied []string) {
		withCreateDenied(res.Response, denied)
		respond(res.Response)
	})
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
