package status

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A group id that is not UTF-8 (one the coordinator got before ids were
// decoded as Kafka decodes them, or from a group log written then) must
// not fail the scrape: a label value that is not UTF-8 panics the
// collector and /metrics answers 500 (issue #42). The label shows the id
// as Kafka reads it.
func TestMetricsScrapeWithInvalidUTF8Group(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	ev := NewEvents(m)
	c := newCoordinator(t, ev)
	m.Bind(c, ev)
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.RebalanceTimeoutMillis, req.EndpointInformationEpoch = "bad-\xff\xfe-group", "m1", 60000, -1
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	sub.SubtopologyID, sub.SourceTopics = "0", []string{"input"}
	topo.Subtopologies = append(topo.Subtopologies, sub)
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	if resp := heartbeat(t, c, req); resp.MemberEpoch < 1 {
		t.Fatalf("join: %+v", resp)
	}
	// As the admin listener serves it (proxy/admin.go).
	code, body := get(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	if !strings.Contains(body, `streamshift_group_epoch{group="bad-`+"\uFFFD\uFFFD"+`-group"}`) {
		t.Fatalf("/metrics has no epoch of the group as Kafka reads its id:\n%s", body)
	}
}
