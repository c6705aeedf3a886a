//go:build kafkajava

package topology

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/streamshift/streamshift/internal/kafkajava"
)

// TestConfigureMatchesKafka is a differential test against Kafka 4.4's own
// InternalTopicManager.configureTopics (bench/assignor-java's
// ConfigureOracle): random topologies and clusters, the same decision on
// both sides. It needs Java and the Maven build:
//
//	(cd bench/assignor-java && mvn -q package)
//	go test -tags kafkajava -run MatchesKafka ./coordinator/streams/topology/
func TestConfigureMatchesKafka(t *testing.T) {
	oracle := kafkajava.Find(t, "streamshift.bench.ConfigureOracle")

	type caseJSON struct {
		Topology map[string]any   `json:"topology"`
		Cluster  map[string]int32 `json:"cluster"`
	}
	r := rand.New(rand.NewPCG(3, 5))
	var topologies []Topology
	var clusters []map[string]int32
	var cases []caseJSON
	for len(cases) < 6000 {
		topo, cluster := randomTopology(r)
		// Bias towards topologies that get past the source check, and
		// towards fresh clusters without internal topics.
		if r.IntN(10) < 7 {
			for _, sub := range topo.Subtopologies {
				for _, src := range sub.SourceTopics {
					if _, ok := cluster[src]; !ok {
						cluster[src] = int32(1 + r.IntN(6))
					}
				}
			}
		}
		if r.IntN(2) == 0 {
			for name := range cluster {
				if !strings.HasPrefix(name, "src") {
					delete(cluster, name)
				}
			}
		}
		// Ids whose Java hash order differs from request and string order.
		perm := r.Perm(16)
		for i := range topo.Subtopologies {
			topo.Subtopologies[i].ID = fmt.Sprint(perm[i] + 5)
		}
		if Validate(topo) != nil {
			continue // rejected before configuration, on both sides
		}
		topologies = append(topologies, topo)
		clusters = append(clusters, cluster)
		cases = append(cases, caseJSON{Topology: topologyJSON(topo), Cluster: cluster})
	}
	type subJSON struct {
		NumTasks    int32            `json:"numTasks"`
		Repartition map[string]int32 `json:"repartition"`
		Changelog   map[string]int32 `json:"changelog"`
	}
	type createJSON struct {
		Partitions        int32             `json:"partitions"`
		ReplicationFactor int16             `json:"replicationFactor"`
		Configs           map[string]string `json:"configs"`
	}
	var results []struct {
		Status        int8                  `json:"status"`
		ErrorCode     int16                 `json:"errorCode"`
		Message       string                `json:"message"`
		Subtopologies map[string]subJSON    `json:"subtopologies"`
		Create        map[string]createJSON `json:"create"`
	}
	oracle.Run(t, cases, &results)

	outcomes := map[string]int{}
	for i, want := range results {
		ct := Configure(topologies[i], counts(clusters[i]))
		fail := func(format string, args ...any) {
			t.Helper()
			t.Errorf("case %d %s\ncluster %v:\n"+format, append([]any{i, mustJSON(cases[i].Topology), clusters[i]}, args...)...)
		}
		var got Error
		if ct.Err != nil {
			got = *ct.Err
		}
		switch {
		case want.ErrorCode != 0:
			outcomes["error"]++
			if got.ErrorCode != want.ErrorCode {
				fail("error %+v, Kafka %d %q", got, want.ErrorCode, want.Message)
				continue
			}
			// Kafka's internal errors carry a Java exception class name and,
			// for duplicate keys, Java's rendering of both values.
			msg := want.Message
			if want.ErrorCode == ErrUnknownServerError {
				msg = msg[strings.Index(msg, ": ")+2:]
			}
			if !strings.HasPrefix(msg, got.Message) || (want.ErrorCode != ErrUnknownServerError && msg != got.Message) {
				fail("message %q, Kafka %q", got.Message, msg)
			}
			continue
		case want.Status != 0:
			outcomes[statusName(want.Status)]++
			if got.Status != want.Status || got.Message != want.Message {
				fail("got %+v, Kafka status %d %q", got, want.Status, want.Message)
				continue
			}
		default:
			outcomes["ready"]++
			if ct.Err != nil {
				fail("got %+v, Kafka ready", got)
				continue
			}
		}
		gotSubs := map[string]subJSON{}
		for _, s := range ct.ConfiguredSubtopologies {
			gotSubs[s.ID] = subJSON{NumTasks: s.NumTasks, Repartition: s.RepartitionSourceTopics, Changelog: s.StateChangelogTopics}
		}
		if want.Subtopologies == nil {
			want.Subtopologies = map[string]subJSON{}
		}
		for id, s := range want.Subtopologies {
			if s.Repartition == nil {
				s.Repartition = map[string]int32{}
			}
			if s.Changelog == nil {
				s.Changelog = map[string]int32{}
			}
			want.Subtopologies[id] = s
		}
		if !reflect.DeepEqual(gotSubs, want.Subtopologies) {
			fail("subtopologies %v, Kafka %v", gotSubs, want.Subtopologies)
		}
		gotCreate := map[string]createJSON{}
		for _, c := range ct.TopicsToCreate {
			configs := map[string]string{}
			for _, cfg := range c.Configs {
				configs[cfg.Key] = cfg.Value
			}
			gotCreate[c.Name] = createJSON{c.Partitions, c.ReplicationFactor, configs}
		}
		if want.Create == nil {
			want.Create = map[string]createJSON{}
		}
		if !reflect.DeepEqual(gotCreate, want.Create) {
			fail("to create %v, Kafka %v", gotCreate, want.Create)
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

func topologyJSON(t Topology) map[string]any {
	info := func(ts []TopicInfo) []map[string]any {
		out := []map[string]any{}
		for _, ti := range ts {
			configs := []map[string]string{}
			for _, c := range ti.Configs {
				configs = append(configs, map[string]string{"key": c.Key, "value": c.Value})
			}
			out = append(out, map[string]any{"name": ti.Name, "partitions": ti.Partitions,
				"replicationFactor": ti.ReplicationFactor, "configs": configs})
		}
		return out
	}
	var subs []map[string]any
	for _, s := range t.Subtopologies {
		groups := []map[string]any{}
		for _, g := range s.CopartitionGroups {
			groups = append(groups, map[string]any{"sourceTopics": g.SourceTopics, "repartitionSourceTopics": g.RepartitionSourceTopics})
		}
		subs = append(subs, map[string]any{
			"id": s.ID, "sourceTopics": s.SourceTopics, "repartitionSinkTopics": s.RepartitionSinkTopics,
			"repartitionSourceTopics": info(s.RepartitionSourceTopics), "stateChangelogTopics": info(s.StateChangelogTopics),
			"copartitionGroups": groups,
		})
	}
	return map[string]any{"epoch": t.Epoch, "subtopologies": subs}
}

func mustJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}
