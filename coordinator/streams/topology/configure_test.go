package topology

import (
	"reflect"
	"testing"

	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

// testTopology is Kafka's InternalTopicManagerTest.makeTestTopology:
// source_topic1 → repartition_topic, and repartition_topic + source_topic2
// copartitioned.
func testTopology() Topology {
	return Topology{
		Epoch: 3,
		Subtopologies: []Subtopology{
			{
				ID:                    "subtopology1",
				SourceTopics:          []string{"source_topic1"},
				RepartitionSinkTopics: []string{"repartition_topic"},
				StateChangelogTopics: []TopicInfo{{
					Name:    "state_changelog_topic1",
					Configs: []Config{{"cleanup.policy", "compact"}},
				}},
			},
			{
				ID:                      "subtopology2",
				SourceTopics:            []string{"source_topic2"},
				RepartitionSourceTopics: []TopicInfo{{Name: "repartition_topic", ReplicationFactor: 3}},
				StateChangelogTopics:    []TopicInfo{{Name: "state_changelog_topic2"}},
				CopartitionGroups:       []CopartitionGroup{{SourceTopics: []int16{0}, RepartitionSourceTopics: []int16{0}}},
			},
		},
	}
}

// Mirrors InternalTopicManagerTest.testConfigureTopicsSetsConfigurationExceptionWhenSourceTopicIsMissing.
func TestConfigureMissingSourceTopic(t *testing.T) {
	ct := Configure(testTopology(), counts(map[string]int32{"source_topic1": 2}))
	wantErr(t, ct.Err, Error{Status: StatusMissingSourceTopics, Message: "Source topics source_topic2 are missing."})
	if ct.ConfiguredSubtopologies != nil || ct.TopicsToCreate != nil || ct.Ready() {
		t.Fatalf("a topology with missing sources has no configuration: %+v", ct)
	}
	if ct.Epoch != 3 {
		t.Fatalf("epoch %d", ct.Epoch)
	}
	if got := ct.Subtopologies(); got != nil {
		t.Fatalf("not ready topology describes subtopologies: %v", got)
	}
}

// Mirrors InternalTopicManagerTest.testConfigureTopics.
func TestConfigureTopics(t *testing.T) {
	ct := Configure(testTopology(), counts(map[string]int32{
		"source_topic1": 2, "source_topic2": 2, "state_changelog_topic2": 2,
	}))
	wantErr(t, ct.Err, Error{Status: StatusMissingInternalTopics,
		// Names in the order of Kafka's HashMap (checked against Java 17).
		Message: "Internal topics are missing: state_changelog_topic1, repartition_topic"})
	if ct.Ready() {
		t.Fatal("missing internal topics must leave the topology not ready")
	}
	wantEqual(t, "topics to create", ct.TopicsToCreate, []TopicToCreate{
		{Name: "state_changelog_topic1", Partitions: 2, ReplicationFactor: -1, Configs: []Config{{"cleanup.policy", "compact"}}},
		{Name: "repartition_topic", Partitions: 2, ReplicationFactor: 3},
	})
	wantEqual(t, "subtopologies", ct.ConfiguredSubtopologies, []ConfiguredSubtopology{
		{
			ID:                          "subtopology1",
			NumTasks:                    2,
			SourceTopics:                []string{"source_topic1"},
			SourceTopicPartitions:       map[string]int32{"source_topic1": 2},
			RepartitionSourceTopics:     map[string]int32{},
			StateChangelogTopics:        map[string]int32{"state_changelog_topic1": 2},
			Stateful:                    true,
			ExternalSourceTopics:        []string{"source_topic1"},
			RepartitionSinkTopics:       []string{"repartition_topic"},
			RepartitionSourceTopicInfos: []InternalTopic{},
			StateChangelogTopicInfos: []InternalTopic{
				{Name: "state_changelog_topic1", Partitions: 2, Configs: []Config{{"cleanup.policy", "compact"}}},
			},
		},
		{
			ID:                          "subtopology2",
			NumTasks:                    2,
			SourceTopics:                []string{"repartition_topic", "source_topic2"},
			SourceTopicPartitions:       map[string]int32{"repartition_topic": 2, "source_topic2": 2},
			RepartitionSourceTopics:     map[string]int32{"repartition_topic": 2},
			StateChangelogTopics:        map[string]int32{"state_changelog_topic2": 2},
			Stateful:                    true,
			ExternalSourceTopics:        []string{"source_topic2"},
			RepartitionSinkTopics:       nil,
			RepartitionSourceTopicInfos: []InternalTopic{{Name: "repartition_topic", Partitions: 2, ReplicationFactor: 3}},
			StateChangelogTopicInfos:    []InternalTopic{{Name: "state_changelog_topic2", Partitions: 2}},
		},
	})
}

func TestConfigureReadyAndDescriber(t *testing.T) {
	topo := testTopology()
	ct := Configure(topo, counts(map[string]int32{
		"source_topic1": 4, "source_topic2": 4, "state_changelog_topic1": 4,
		"state_changelog_topic2": 4, "repartition_topic": 4,
	}))
	if !ct.Ready() || ct.Err != nil || len(ct.TopicsToCreate) != 0 {
		t.Fatalf("want ready, got %+v", ct)
	}
	var d assignor.TopologyDescriber = ct
	wantEqual(t, "describer", d.Subtopologies(), []assignor.Subtopology{
		{ID: "subtopology1", NumTasks: 4, Stateful: true},
		{ID: "subtopology2", NumTasks: 4, Stateful: true},
	})
	if s, ok := ct.Subtopology("subtopology2"); !ok || s.NumTasks != 4 {
		t.Fatalf("lookup: %+v %v", s, ok)
	}
	if _, ok := ct.Subtopology("nope"); ok {
		t.Fatal("found an unknown subtopology")
	}
	if !reflect.DeepEqual(topo, testTopology()) {
		t.Fatal("Configure modified its input")
	}
}

func TestConfigure(t *testing.T) {
	tests := []struct {
		name       string
		topology   Topology
		cluster    map[string]int32
		err        Error
		numTasks   map[string]int32 // by subtopology, when configured
		changelogs map[string]int32 // all changelog counts, when configured
		create     []string
	}{
		{
			name: "more than three missing source topics are summarized",
			topology: Topology{Subtopologies: []Subtopology{
				{ID: "0", SourceTopics: []string{"e", "d", "c", "b", "a"}},
			}},
			cluster: map[string]int32{"c": 1},
			err:     Error{Status: StatusMissingSourceTopics, Message: "Source topics a, b, d and 1 additional topics are missing."},
		},
		{
			name: "existing internal topic with a wrong count",
			topology: Topology{Subtopologies: []Subtopology{
				{ID: "0", SourceTopics: []string{"in"}, StateChangelogTopics: []TopicInfo{{Name: "app-store-changelog"}}},
			}},
			cluster: map[string]int32{"in": 6, "app-store-changelog": 3},
			err: Error{Status: StatusIncorrectlyPartitionedTopics,
				Message: "Existing topic app-store-changelog has different number of partitions: expected 6, found 3"},
		},
		{
			name: "copartitioned sources disagree",
			topology: Topology{Subtopologies: []Subtopology{
				{ID: "0", SourceTopics: []string{"left", "right"}, CopartitionGroups: []CopartitionGroup{{SourceTopics: []int16{0, 1}}}},
			}},
			cluster: map[string]int32{"left": 4, "right": 2},
			err: Error{Status: StatusIncorrectlyPartitionedTopics,
				Message: "Following topics do not have the same number of partitions: [{left=4, right=2}]"},
		},
		{
			name: "copartitioning forces a repartition topic to the source count",
			topology: Topology{Subtopologies: []Subtopology{
				{ID: "0", SourceTopics: []string{"big"}, RepartitionSinkTopics: []string{"app-rep"}},
				{
					ID: "1", SourceTopics: []string{"small"},
					RepartitionSourceTopics: []TopicInfo{{Name: "app-rep"}},
					StateChangelogTopics:    []TopicInfo{{Name: "app-join-changelog"}},
					CopartitionGroups:       []CopartitionGroup{{SourceTopics: []int16{0}, RepartitionSourceTopics: []int16{0}}},
				},
			}},
			cluster:    map[string]int32{"big": 8, "small": 2},
			err:        Error{Status: StatusMissingInternalTopics, Message: "Internal topics are missing: app-join-changelog, app-rep"},
			numTasks:   map[string]int32{"0": 8, "1": 2},
			changelogs: map[string]int32{"app-join-changelog": 2},
			create:     []string{"app-join-changelog", "app-rep"},
		},
		{
			name: "fixed repartition count is kept",
			topology: Topology{Subtopologies: []Subtopology{
				{ID: "0", SourceTopics: []string{"in"}, RepartitionSinkTopics: []string{"app-rep"}},
				{ID: "1", RepartitionSourceTopics: []TopicInfo{{Name: "app-rep", Partitions: 12}},
					StateChangelogTopics: []TopicInfo{{Name: "app-agg-changelog"}}},
			}},
			cluster:    map[string]int32{"in": 3, "app-rep": 12, "app-agg-changelog": 12},
			numTasks:   map[string]int32{"0": 3, "1": 12},
			changelogs: map[string]int32{"app-agg-changelog": 12},
		},
		{
			name: "fixed repartition topic conflicting with copartitioned source",
			topology: Topology{Subtopologies: []Subtopology{
				{ID: "0", SourceTopics: []string{"in"}, RepartitionSinkTopics: []string{"app-rep"}},
				{ID: "1", SourceTopics: []string{"other"}, RepartitionSourceTopics: []TopicInfo{{Name: "app-rep", Partitions: 12}},
					CopartitionGroups: []CopartitionGroup{{SourceTopics: []int16{0}, RepartitionSourceTopics: []int16{0}}}},
			}},
			cluster: map[string]int32{"in": 3, "other": 3},
			err: Error{Status: StatusIncorrectlyPartitionedTopics,
				Message: "Number of partitions [12] of repartition topic [app-rep] doesn't match number of partitions [3] of the source topic."},
		},
		{
			name: "repartition loop",
			topology: Topology{Subtopologies: []Subtopology{
				{ID: "0", RepartitionSourceTopics: []TopicInfo{{Name: "a"}}, RepartitionSinkTopics: []string{"b"}},
				{ID: "1", RepartitionSourceTopics: []TopicInfo{{Name: "b"}}, RepartitionSinkTopics: []string{"a"}},
			}},
			err: Error{ErrorCode: ErrStreamsInvalidTopology, Message: "Failed to compute number of partitions for all " +
				"repartition topics. There may be loops in the topology that cannot be resolved."},
		},
		{
			name:     "subtopology without inputs",
			topology: Topology{Subtopologies: []Subtopology{{ID: "7"}}},
			err:      Error{ErrorCode: ErrStreamsInvalidTopology, Message: "No source topics found for subtopology 7"},
		},
		{
			name: "copartition index out of range comes first",
			topology: Topology{Subtopologies: []Subtopology{
				{ID: "0", SourceTopics: []string{"missing"}, CopartitionGroups: []CopartitionGroup{{SourceTopics: []int16{1}}}},
			}},
			err: Error{ErrorCode: ErrStreamsInvalidTopology,
				Message: "Copartition group of subtopology 0 refers to source topic index 1, but the subtopology has 1 source topics."},
		},
		{
			name: "stateless subtopology, all topics exist",
			topology: Topology{Subtopologies: []Subtopology{
				{ID: "0", SourceTopics: []string{"a", "b"}},
			}},
			cluster:  map[string]int32{"a": 2, "b": 5},
			numTasks: map[string]int32{"0": 5},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ct := Configure(tc.topology, counts(tc.cluster))
			wantErr(t, ct.Err, tc.err)
			if tc.numTasks == nil {
				if ct.ConfiguredSubtopologies != nil {
					t.Fatalf("unexpected configuration %+v", ct.ConfiguredSubtopologies)
				}
				return
			}
			got := map[string]int32{}
			gotChangelogs := map[string]int32{}
			for _, s := range ct.ConfiguredSubtopologies {
				got[s.ID] = s.NumTasks
				for k, v := range s.StateChangelogTopics {
					gotChangelogs[k] = v
				}
				if s.Stateful != (len(s.StateChangelogTopics) > 0) {
					t.Fatalf("subtopology %s: stateful %v with changelogs %v", s.ID, s.Stateful, s.StateChangelogTopics)
				}
			}
			wantEqual(t, "tasks", got, tc.numTasks)
			if tc.changelogs == nil {
				tc.changelogs = map[string]int32{}
			}
			wantEqual(t, "changelogs", gotChangelogs, tc.changelogs)
			var created []string
			for _, c := range ct.TopicsToCreate {
				created = append(created, c.Name)
			}
			wantEqual(t, "created", created, tc.create)
		})
	}
}

func TestConfigureNilMetadata(t *testing.T) {
	ct := Configure(testTopology(), nil)
	wantErr(t, ct.Err, Error{Status: StatusMissingSourceTopics, Message: "Source topics source_topic1, source_topic2 are missing."})
}
