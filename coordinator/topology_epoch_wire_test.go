package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Which Kafka streamshift follows for a topology that differs from the
// group's (docs/beyond-kafka-4.4.md, "Which Kafka behaviour streamshift
// follows"). Kafka 4.4 and trunk as of its newest stored snapshot
// (StreamsGroupHeartbeat v0-1 both; GroupMetadataManager.maybeUpdateTopology)
// answer INVALID_REQUEST "Topology updates are not supported yet." to a
// topology of the group's epoch or a higher one that differs, and take a
// lower epoch as stale (the group's topology is kept). Neither emits
// STREAMS_INVALID_TOPOLOGY_EPOCH (131), which the clients already know: no
// heartbeat version asks for it yet, so no version gets it here. When Kafka
// adds one (KAFKA-21370), the answer is to follow its version gate, and
// this test is where to say so.
func TestTopologyMismatchAnswersFollowKafka(t *testing.T) {
	for _, version := range []int16{0, 1} {
		h := newHarness(t, nil)
		h.md.SetTopic("foo", 2)
		h.md.SetTopic("bar", 2)
		first := joinReq("g", "m1", "p1", sourceTopology("foo"))
		first.Version = version
		first.Topology.Epoch = 3
		r := h.ok(first)
		if r.MemberEpoch != 2 {
			t.Fatalf("v%d: first member epoch %d, want 2 (a group starts at epoch 1, its first assignment is 2)", version, r.MemberEpoch)
		}
		for _, c := range []struct {
			name  string
			epoch int32
			want  *kerr.Error
		}{
			{"same epoch, other topology", 3, kerr.InvalidRequest},
			{"higher epoch, other topology", 4, kerr.InvalidRequest},
			{"lower epoch, other topology", 2, nil},
		} {
			req := joinReq("g", "m-"+c.name, "p2", sourceTopology("foo", "bar"))
			req.Version = version
			req.Topology.Epoch = c.epoch
			resp := h.hb(req)
			wantCode := int16(0)
			if c.want != nil {
				wantCode = c.want.Code
			}
			if resp.ErrorCode != wantCode {
				t.Fatalf("v%d %s: %v %q, want %v", version, c.name, kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage), c.want)
			}
			if c.want == kerr.InvalidRequest && deref(resp.ErrorMessage) != "Topology updates are not supported yet." {
				t.Fatalf("v%d %s: message %q", version, c.name, deref(resp.ErrorMessage))
			}
			if resp.ErrorCode == kerr.StreamsInvalidTopologyEpoch.Code {
				t.Fatalf("v%d %s: STREAMS_INVALID_TOPOLOGY_EPOCH, which no Kafka emits yet", version, c.name)
			}
		}
		g := h.group("g")
		if g.Topology.Epoch != 3 || len(g.Topology.Subtopologies[0].SourceTopics) != 1 {
			t.Fatalf("v%d: the group's topology changed: %+v", version, g.Topology)
		}
	}
}
