package route

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/status"
)

// A StreamsGroupHeartbeat joining group "bad-\xff\xfe-group" through the
// proxy (issue #42): the proxy reads the id as Kafka does, so the group
// streamshift serves is "bad-\uFFFD\uFFFD-group" (what a Kafka 4.4
// coordinator would hold), and a scrape of the group metrics afterwards
// answers 200. Before, the coordinator held the raw bytes and every
// scrape failed with 500.
func TestStreamsGroupHeartbeatInvalidUTF8GroupThenScrape(t *testing.T) {
	e := newEnv(t, func(e *env) { e.upstream, e.partitions, e.topics = nil, 3, []string{"words"} })
	reg := prometheus.NewRegistry()
	m := status.NewMetrics(reg)
	m.Bind(e.coord, nil)

	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.EndpointInformationEpoch, req.RebalanceTimeoutMillis = 1, "bad-\xff\xfe-group", "member-\xc3", -1, 30000
	pid := "process-\xed\xa0\x80"
	req.ProcessID = &pid
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{"words"}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	resp, err := req.RequestWith(e.ctx, e.broker)
	if err != nil || resp.ErrorCode != 0 || resp.MemberEpoch < 1 {
		t.Fatalf("join: %v %+v", err, resp)
	}
	if resp.MemberID != "member-\uFFFD" {
		t.Fatalf("member id %q, want the id as Kafka reads it", resp.MemberID)
	}
	if !e.coord.Owns("bad-\uFFFD\uFFFD-group") || e.coord.Owns("bad-\xff\xfe-group") {
		t.Fatal(`the coordinator does not hold "bad-\uFFFD\uFFFD-group" (as Kafka reads the id) alone`)
	}

	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	if rec.Code != http.StatusOK || !strings.Contains(string(body), "bad-\uFFFD\uFFFD-group") {
		t.Fatalf("/metrics: %d\n%s", rec.Code, body)
	}
}
