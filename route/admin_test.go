package route

import (
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/streamshift/streamshift/proxy/proxytest"
)

// adminEnv is the production route set over kfake (newEnv, at kfake's
// newest versions) with a streams group "app" with one member (source topic
// "words"), and a classic group "plain" that only the upstream knows.
type adminEnv struct {
	*env
	epoch int32
	// member is the connection of member-1 and of the admin requests (no
	// ACLs).
	member *proxytest.Conn

	mu   sync.Mutex
	left []string // the groups the anchor left upstream
}

func newAdminEnv(t *testing.T) *adminEnv { return newAdminEnvBrokers(t, 1) }

func newAdminEnvBrokers(t *testing.T, brokers int) *adminEnv {
	t.Helper()
	e := &adminEnv{env: newEnv(t, direct, func(e *env) {
		e.brokers, e.upstream, e.partitions, e.topics, e.timeout = brokers, nil, 3, []string{"words", "other"}, 30*time.Second
	})}
	e.member = e.conn(allowAll)
	// The anchor's LeaveGroups, as the upstream sees them.
	e.cluster.ControlKey(int16(kmsg.LeaveGroup), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		lr := kr.(*kmsg.LeaveGroupRequest)
		for _, m := range lr.Members {
			if m.InstanceID != nil && *m.InstanceID == e.anchors.InstanceID() {
				e.mu.Lock()
				e.left = append(e.left, lr.Group)
				e.mu.Unlock()
			}
		}
		return nil, nil, false
	})

	// Committed offsets upstream for both groups: the upstream then lists
	// "app" too (as an Empty classic group) before its anchor joins.
	for _, g := range []string{"app", "plain"} {
		offs := kadm.Offsets{}
		offs.Add(kadm.Offset{Topic: "words", Partition: 0, At: 5, LeaderEpoch: -1})
		if _, err := e.adm.CommitOffsets(e.ctx, g, offs); err != nil {
			t.Fatal(err)
		}
	}
	e.join(t)
	// The anchor holds "app" upstream (its join runs on its own goroutine),
	// as it does once a member has its tasks.
	if _, err := e.anchors.Generation(e.ctx, "app"); err != nil {
		t.Fatal(err)
	}
	return e
}

// join makes member-1 join "app" and heartbeats until it has its tasks:
// "words" is in the metadata from the start, so a few heartbeats do.
func (e *adminEnv) join(t *testing.T) {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.EndpointInformationEpoch, req.RebalanceTimeoutMillis = 1, "app", "member-1", -1, 30000
	pid := "process-1"
	req.ProcessID = &pid
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{"words"}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	for range 5 {
		resp := e.heartbeat(t, req)
		e.epoch = resp.MemberEpoch
		if len(resp.Status) == 0 && resp.ActiveTasks != nil {
			return
		}
		req = kmsg.NewPtrStreamsGroupHeartbeatRequest()
		req.Version, req.Group, req.MemberID, req.MemberEpoch = 1, "app", "member-1", e.epoch
	}
	t.Fatal("member-1 not assigned after 5 heartbeats")
}

func (e *adminEnv) heartbeat(t *testing.T, req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	t.Helper()
	req.Version = 1
	resp := respond[*kmsg.StreamsGroupHeartbeatResponse](e.env, e.member, req)
	if resp.ErrorCode != 0 {
		t.Fatalf("heartbeat: %v %v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
	}
	return resp
}

func (e *adminEnv) leave(t *testing.T) {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = "app", "member-1", -1
	e.heartbeat(t, req)
}

// listGroups is a ListGroups v5 with these filters on a connection to node
// (-1: bootstrap), as the client gets it.
func (e *adminEnv) listGroups(node int32, states, types []string) *kmsg.ListGroupsResponse {
	req := kmsg.NewPtrListGroupsRequest()
	req.Version, req.StatesFilter, req.TypesFilter = 5, states, types
	c := e.conn(allowAll)
	c.Client.Node = node
	return e.through(c, req).(*kmsg.ListGroupsResponse)
}

func TestAdminListGroups(t *testing.T) {
	e := newAdminEnv(t)
	listed := map[string][]kmsg.ListGroupsResponseGroup{}
	for _, g := range e.listGroups(-1, nil, nil).Groups {
		listed[g.Group] = append(listed[g.Group], g)
	}
	// The upstream's own entry for "app" is gone: the answer has it once.
	if len(listed["app"]) != 1 || len(listed["plain"]) != 1 {
		t.Fatalf("app listed %d times, plain %d: %+v", len(listed["app"]), len(listed["plain"]), listed)
	}
	app, plain := listed["app"][0], listed["plain"][0]
	if app.ProtocolType != "streams" || app.GroupType != "streams" || app.GroupState != "Stable" {
		t.Fatalf("app listed as %+v", app)
	}
	if plain.ProtocolType != "consumer" && plain.ProtocolType != "" {
		t.Fatalf("plain listed as %+v", plain)
	}

	for _, tc := range []struct {
		name          string
		states, types []string
		wantApp       bool
	}{
		{"type streams", nil, []string{"Streams"}, true},
		{"type classic", nil, []string{"classic"}, false},
		{"state stable", []string{"stable"}, nil, true},
		{"state empty", []string{"empty"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.listGroups(-1, tc.states, tc.types)
			got := false
			for _, g := range resp.Groups {
				got = got || g.Group == "app"
			}
			if got != tc.wantApp {
				t.Fatalf("app listed: %v, want %v (%+v)", got, tc.wantApp, resp.Groups)
			}
		})
	}
}

// On a cluster of three brokers the owned group is listed once, by the
// broker that coordinates it upstream, as Kafka lists a streams group: the
// Java admin client asks every broker and keeps duplicates.
func TestAdminListGroupsOncePerCluster(t *testing.T) {
	e := newAdminEnvBrokers(t, 3)
	seen := 0
	for node := int32(0); node < 3; node++ {
		for _, g := range e.listGroups(node, nil, nil).Groups {
			if g.Group == "app" {
				seen++
				if g.GroupType != "streams" || g.ProtocolType != "streams" {
					t.Fatalf("node %d lists app as %+v", node, g)
				}
			}
		}
	}
	if seen != 1 {
		t.Fatalf("app listed %d times across the brokers", seen)
	}
}

func TestAdminDescribeGroups(t *testing.T) {
	e := newAdminEnv(t)
	for _, v := range []int16{5, 6} {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Version, req.Groups = v, []string{"plain", "app", "missing"}
		resp := e.through(e.member, req).(*kmsg.DescribeGroupsResponse)
		if resp.Version != v || len(resp.Groups) != 3 {
			t.Fatalf("v%d: %+v", v, resp)
		}
		for i, id := range req.Groups {
			if resp.Groups[i].Group != id {
				t.Fatalf("v%d: order %+v", v, resp.Groups)
			}
		}
		app := resp.Groups[1]
		if v == 5 && (app.ErrorCode != 0 || app.State != "Dead") {
			t.Fatalf("v5 app: %+v", app)
		}
		if v == 6 && (app.ErrorCode != kerr.GroupIDNotFound.Code || app.ErrorMessage == nil || *app.ErrorMessage != "Group app is not a classic group.") {
			t.Fatalf("v6 app: %+v", app)
		}
		if resp.Groups[0].ErrorCode != 0 || resp.Groups[0].State != "Empty" {
			t.Fatalf("v%d plain (forwarded): %+v", v, resp.Groups[0])
		}
	}
}

func TestAdminOffsetDelete(t *testing.T) {
	e := newAdminEnv(t)
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = "app"
	for _, topic := range []string{"words", "other"} {
		rt := kmsg.NewOffsetDeleteRequestTopic()
		rt.Topic = topic
		rt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
		req.Topics = append(req.Topics, rt)
	}
	resp := e.through(e.member, req).(*kmsg.OffsetDeleteResponse)
	codes := map[string]int16{}
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			codes[rt.Topic] = p.ErrorCode
		}
	}
	if resp.ErrorCode != 0 || codes["words"] != kerr.GroupSubscribedToTopic.Code || codes["other"] != 0 {
		t.Fatalf("non-empty group: %+v", resp)
	}
	// An Empty group: everything goes upstream, which deletes.
	e.leave(t)
	resp = e.through(e.member, req).(*kmsg.OffsetDeleteResponse)
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			if p.ErrorCode != 0 {
				t.Fatalf("empty group: %+v", resp)
			}
		}
	}
	// The anchor left first: upstream it would hold the group subscribed.
	e.mu.Lock()
	left := e.left
	e.mu.Unlock()
	if len(left) != 1 || left[0] != "app" {
		t.Fatalf("anchor leaves: %v", left)
	}
}

func TestAdminDeleteGroups(t *testing.T) {
	e := newAdminEnv(t)
	deleteGroups := func(groups ...string) map[string]error {
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Version, req.Groups = 2, groups
		resp := e.through(e.member, req).(*kmsg.DeleteGroupsResponse)
		out := map[string]error{}
		for _, g := range resp.Groups {
			out[g.Group] = kerr.ErrorForCode(g.ErrorCode)
		}
		if len(out) != len(groups) {
			t.Fatalf("delete %v answered %+v", groups, resp.Groups)
		}
		return out
	}
	if res := deleteGroups("app"); !kerrIs(res["app"], kerr.NonEmptyGroup) {
		t.Fatalf("non-empty: %+v", res)
	}
	e.leave(t)
	res := deleteGroups("plain", "app", "missing")
	if res["app"] != nil || res["plain"] != nil || !kerrIs(res["missing"], kerr.GroupIDNotFound) {
		t.Fatalf("delete: app %v plain %v missing %v", res["app"], res["plain"], res["missing"])
	}
	if e.coord.Owns("app") {
		t.Fatal("app still owned")
	}
	e.mu.Lock()
	left := e.left
	e.mu.Unlock()
	if len(left) != 1 || left[0] != "app" {
		t.Fatalf("anchor leaves: %v", left)
	}
	// The offsets are gone upstream.
	offs, err := e.adm.FetchOffsets(e.ctx, "app")
	if err != nil && !kerrIs(err, kerr.GroupIDNotFound) {
		t.Fatal(err)
	}
	if err == nil && len(offs) != 0 {
		t.Fatalf("offsets left upstream: %+v", offs)
	}
}

func kerrIs(err error, want *kerr.Error) bool {
	ke, ok := err.(*kerr.Error)
	return ok && ke == want
}

func groupResource(name string) kmsg.IncrementalAlterConfigsRequestResource {
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, name
	return r
}

func set(name, value string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = name, kmsg.IncrementalAlterConfigOpSet, &value
	return c
}

func TestAdminGroupConfigs(t *testing.T) {
	e := newAdminEnv(t)
	alter := func(t *testing.T, configs ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsResponseResource {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := groupResource("app")
		r.Configs = configs
		topic := kmsg.NewIncrementalAlterConfigsRequestResource()
		topic.ResourceType, topic.ResourceName = kmsg.ConfigResourceTypeTopic, "words"
		topic.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{set("retention.ms", "100000")}
		req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{topic, r}
		req.Version = 1
		resp := e.through(e.member, req).(*kmsg.IncrementalAlterConfigsResponse)
		if len(resp.Resources) != 2 || resp.Resources[0].ResourceName != "words" || resp.Resources[0].ErrorCode != 0 || resp.Resources[1].ResourceName != "app" {
			t.Fatalf("mixed alter: %+v", resp.Resources)
		}
		return resp.Resources[1]
	}
	for _, tc := range []struct {
		name string
		cfg  kmsg.IncrementalAlterConfigsRequestResourceConfig
		msg  string
	}{
		{"above max", set("streams.num.standby.replicas", "3"), "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"},
		{"negative", set("streams.num.standby.replicas", "-1"), "Invalid value -1 for configuration streams.num.standby.replicas: Value must be at least 0"},
		{"not a number", set("streams.session.timeout.ms", "abc"), "Invalid value abc for configuration streams.session.timeout.ms: Not a number of type INT"},
		{"below min session", set("streams.session.timeout.ms", "1000"), "streams.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms"},
		{"unknown", set("streams.bogus", "1"), "Unknown group config name: streams.bogus"},
		{"append to int", kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "streams.num.standby.replicas", Op: kmsg.IncrementalAlterConfigOpAppend}, "Config value append is not allowed for config key: streams.num.standby.replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := alter(t, tc.cfg)
			if r.ErrorCode != kerr.InvalidConfig.Code || r.ErrorMessage == nil || *r.ErrorMessage != tc.msg {
				t.Fatalf("got %v %v, want INVALID_CONFIG %q", kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage, tc.msg)
			}
		})
	}
	if r := alter(t, set("streams.num.standby.replicas", "1")); r.ErrorCode != 0 {
		t.Fatalf("set standbys: %v %v", kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
	}

	describe := func(t *testing.T, names ...string) map[string]kmsg.DescribeConfigsResponseResourceConfig {
		t.Helper()
		req := kmsg.NewPtrDescribeConfigsRequest()
		g := kmsg.NewDescribeConfigsRequestResource()
		g.ResourceType, g.ResourceName, g.ConfigNames = kmsg.ConfigResourceTypeGroupConfig, "app", names
		topic := kmsg.NewDescribeConfigsRequestResource()
		topic.ResourceType, topic.ResourceName = kmsg.ConfigResourceTypeTopic, "words"
		req.Resources = []kmsg.DescribeConfigsRequestResource{g, topic}
		req.Version = 4
		resp := e.through(e.member, req).(*kmsg.DescribeConfigsResponse)
		if len(resp.Resources) != 2 || resp.Resources[0].ResourceName != "app" || resp.Resources[1].ResourceName != "words" || resp.Resources[1].ErrorCode != 0 {
			t.Fatalf("mixed describe: %+v", resp.Resources)
		}
		out := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
		for _, c := range resp.Resources[0].Configs {
			out[c.Name] = c
		}
		return out
	}
	got := describe(t)
	sb := got["streams.num.standby.replicas"]
	if sb.Value == nil || *sb.Value != "1" || sb.Source != kmsg.ConfigSourceGroupConfig {
		t.Fatalf("standbys: %+v", sb)
	}
	st := got["streams.session.timeout.ms"]
	if st.Value == nil || *st.Value != "45000" || st.Source != kmsg.ConfigSourceDefaultConfig || st.ConfigType != kmsg.ConfigTypeInt {
		t.Fatalf("session timeout: %+v", st)
	}
	if got := describe(t, "streams.heartbeat.interval.ms"); len(got) != 1 {
		t.Fatalf("named describe: %+v", got)
	}

	// The next heartbeat picks the change up: the group epoch moves.
	before := e.groupEpoch(t)
	hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch = "app", "member-1", e.epoch
	e.heartbeat(t, hb)
	if after := e.groupEpoch(t); after <= before {
		t.Fatalf("group epoch %d after the standby change, was %d", after, before)
	}

	// DELETE returns to the default.
	del := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	del.Name, del.Op = "streams.num.standby.replicas", kmsg.IncrementalAlterConfigOpDelete
	if r := alter(t, del); r.ErrorCode != 0 {
		t.Fatalf("delete: %+v", r)
	}
	if sb := describe(t)["streams.num.standby.replicas"]; *sb.Value != "0" || sb.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("after delete: %+v", sb)
	}
}

func (e *adminEnv) groupEpoch(t *testing.T) int32 {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Version, req.Groups = 1, []string{"app"}
	resp := respond[*kmsg.StreamsGroupDescribeResponse](e.env, e.member, req)
	if len(resp.Groups) != 1 {
		t.Fatalf("describe: %+v", resp)
	}
	return resp.Groups[0].Epoch
}

// A streams group's settings can be made before its first member joins:
// the upstream (3.9) knows no GROUP configs, so streams.* ones live here.
func TestAdminGroupConfigsBeforeOwned(t *testing.T) {
	e := newAdminEnv(t)
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := groupResource("future-app")
	r.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{set("streams.num.standby.replicas", "2")}
	req.Version, req.Resources = 1, []kmsg.IncrementalAlterConfigsRequestResource{r}
	resp := e.through(e.member, req).(*kmsg.IncrementalAlterConfigsResponse)
	if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("alter: %+v", resp.Resources)
	}
	if e.coord.Owns("future-app") {
		t.Fatal("setting a config made the group owned")
	}
	dreq := kmsg.NewPtrDescribeConfigsRequest()
	g := kmsg.NewDescribeConfigsRequestResource()
	g.ResourceType, g.ResourceName, g.ConfigNames = kmsg.ConfigResourceTypeGroupConfig, "future-app", []string{"streams.num.standby.replicas"}
	dreq.Resources = []kmsg.DescribeConfigsRequestResource{g}
	dreq.Version, dreq.IncludeSynonyms = 4, true
	dresp := e.through(e.member, dreq).(*kmsg.DescribeConfigsResponse)
	if len(dresp.Resources) != 1 || len(dresp.Resources[0].Configs) != 1 {
		t.Fatalf("describe: %+v", dresp.Resources)
	}
	c := dresp.Resources[0].Configs[0]
	if *c.Value != "2" || c.Source != kmsg.ConfigSourceGroupConfig || len(c.ConfigSynonyms) != 2 ||
		c.ConfigSynonyms[1].Name != "group.streams.num.standby.replicas" || *c.ConfigSynonyms[1].Value != "0" ||
		c.ConfigSynonyms[1].Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("describe: %+v", c)
	}
}

// TestAdminStreamsDescribeOfAClassicGroup: StreamsGroupDescribe of a group
// the upstream has as a classic group (one under migration before its
// takeover or after its hand-back) is answered as Kafka 4.4 answers it:
// GROUP_ID_NOT_FOUND "Group <id> is not a streams group."; a group nobody
// has stays "Group <id> not found.", and a served one is described.
func TestAdminStreamsDescribeOfAClassicGroup(t *testing.T) {
	e := newAdminEnv(t)
	// The client's connection: its asks go to the upstream.
	conn := proxytest.NewConn(func(r kmsg.Request) (kmsg.Response, error) { return e.upstreamOf(-1)(r), nil })
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Version, req.Groups = 1, []string{"plain", "missing", "app"}
	resp := respond[*kmsg.StreamsGroupDescribeResponse](e.env, conn, req)
	if len(resp.Groups) != 3 {
		t.Fatalf("describe: %+v", resp)
	}
	want := map[string]string{"plain": "Group plain is not a streams group.", "missing": "Group missing not found.", "app": ""}
	for _, g := range resp.Groups {
		msg := ""
		if g.ErrorMessage != nil {
			msg = *g.ErrorMessage
		}
		if w := want[g.Group]; msg != w || (w == "") != (g.ErrorCode == 0) || w != "" && g.ErrorCode != kerr.GroupIDNotFound.Code {
			t.Errorf("%s: error %d %q, want %q", g.Group, g.ErrorCode, msg, w)
		}
	}
}

// TestAdminDescribeGroupsV6OnAnOlderUpstream: DescribeGroups is advertised
// up to v6 whatever the upstream speaks, as Kafka 4.4 negotiates it with a
// 4.x admin client: a v6 request of groups the upstream serves goes there
// at the upstream's newest version (v5 on 3.9) and its answer comes back.
func TestAdminDescribeGroupsV6OnAnOlderUpstream(t *testing.T) {
	e := newEnv(t, direct) // a 3.9 upstream: DescribeGroups v0-v5
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "in", Partition: 0, At: 5, LeaderEpoch: -1})
	if _, err := e.adm.CommitOffsets(e.ctx, "plain", offs); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version, req.Groups = 6, []string{"plain"}
	res := e.serve(proxytest.NewConn(nil), req)
	if res.Kind != proxytest.Rewritten || res.Version != 5 {
		t.Fatalf("v6 of an upstream group: %v at v%d, want forwarded at v5", res.Kind, res.Version)
	}
	resp := e.through(proxytest.NewConn(nil), req).(*kmsg.DescribeGroupsResponse)
	if len(resp.Groups) != 1 || resp.Groups[0].Group != "plain" || resp.Groups[0].ErrorCode != 0 || resp.Groups[0].State != "Empty" {
		t.Fatalf("v6 of plain through a 3.9 upstream: %+v", resp)
	}
}

// TestAdminConsumerGroupDescribe: ConsumerGroupDescribe, which Kafka's 4.x
// admin client sends before DescribeGroups, answers a streams group served
// here as Kafka 4.4 does, GROUP_ID_NOT_FOUND "Group <id> is not a consumer
// group." (the message kafka-consumer-groups --describe then prints); on an
// upstream without the key (3.6) every group is answered so, and the
// client goes on to DescribeGroups.
func TestAdminConsumerGroupDescribe(t *testing.T) {
	check := func(t *testing.T, resp *kmsg.ConsumerGroupDescribeResponse, groups ...string) {
		t.Helper()
		if len(resp.Groups) != len(groups) {
			t.Fatalf("answer %+v", resp)
		}
		for i, g := range groups {
			got := resp.Groups[i]
			if got.Group != g || got.ErrorCode != kerr.GroupIDNotFound.Code || got.ErrorMessage == nil || *got.ErrorMessage != "Group "+g+" is not a consumer group." {
				t.Errorf("%s: %+v", g, got)
			}
		}
	}
	t.Run("served here", func(t *testing.T) {
		e := newAdminEnv(t) // the upstream speaks ConsumerGroupDescribe
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{"app"}
		check(t, respond[*kmsg.ConsumerGroupDescribeResponse](e.env, e.member, req), "app")
	})
	t.Run("upstream without the key", func(t *testing.T) {
		e := newEnv(t, direct, func(e *env) { e.upstream = kversion.V3_6_0() })
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{"plain", "missing"}
		check(t, respond[*kmsg.ConsumerGroupDescribeResponse](e, e.conn(allowAll), req), "plain", "missing")
	})
}

// TestAdminConsumerGroupDescribeOnAnOlderUpstream: a client's v1 of a group
// the upstream serves goes there at the upstream's newest version (v0 on
// 3.9, which closes the connection on a v1).
func TestAdminConsumerGroupDescribeOnAnOlderUpstream(t *testing.T) {
	e := newEnv(t, direct) // 3.9: ConsumerGroupDescribe v0
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Version, req.Groups = 1, []string{"plain"}
	res := e.serve(e.conn(allowAll), req)
	if res.Kind != proxytest.Rewritten || res.Version != 0 {
		t.Fatalf("v1 of an upstream group: %v at v%d, want forwarded at v0", res.Kind, res.Version)
	}
}
