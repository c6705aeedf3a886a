package topology

import "testing"

// Mirrors Kafka's RepartitionTopicsTest.
func TestRepartitionPartitionCounts(t *testing.T) {
	sources := counts(map[string]int32{"source1": 3, "source2": 3})
	repartition1 := TopicInfo{Name: "repartition1", Partitions: 4}
	repartition2 := TopicInfo{Name: "repartition2", Partitions: 2}
	withoutCount := TopicInfo{Name: "repartitionWithoutPartitionCount"}

	tests := []struct {
		name   string
		subs   []Subtopology
		counts countFunc
		want   map[string]int32
		err    Error
	}{
		{
			name: "setup repartition topics",
			subs: []Subtopology{
				{ID: "subtopology1", SourceTopics: []string{"source1", "source2"}, RepartitionSinkTopics: []string{"repartition1"}},
				{ID: "subtopology2", RepartitionSourceTopics: []TopicInfo{repartition1}},
			},
			counts: sources,
			want:   map[string]int32{"repartition1": 4},
		},
		{
			name: "missing source topics is an internal error",
			subs: []Subtopology{
				{ID: "subtopology1", SourceTopics: []string{"source1", "source2"}, RepartitionSinkTopics: []string{"repartition1"}},
				{ID: "subtopology2", RepartitionSourceTopics: []TopicInfo{repartition1}},
			},
			counts: counts(map[string]int32{"source2": 3}),
			err:    Error{ErrorCode: ErrUnknownServerError, Message: "Missing source topics: source1"},
		},
		{
			name: "loop",
			subs: []Subtopology{
				{ID: "subtopology1", RepartitionSourceTopics: []TopicInfo{withoutCount}, RepartitionSinkTopics: []string{withoutCount.Name}},
			},
			counts: sources,
			err: Error{ErrorCode: ErrStreamsInvalidTopology, Message: "Failed to compute number of partitions for all " +
				"repartition topics. There may be loops in the topology that cannot be resolved."},
		},
		{
			name: "repartition source never written",
			subs: []Subtopology{
				{ID: "subtopology1", RepartitionSourceTopics: []TopicInfo{withoutCount}},
			},
			counts: sources,
			err: Error{ErrorCode: ErrStreamsInvalidTopology, Message: "Failed to compute number of partitions for all " +
				"repartition topics, because a repartition source topic is never used as a sink topic."},
		},
		{
			name: "count from upstream external source topic",
			subs: []Subtopology{
				{
					ID: "subtopology0", SourceTopics: []string{"source1"},
					RepartitionSinkTopics:   []string{repartition1.Name, withoutCount.Name},
					RepartitionSourceTopics: []TopicInfo{repartition2},
				},
				{ID: "subtopologyWithoutPartitionCount", RepartitionSourceTopics: []TopicInfo{repartition1, withoutCount}},
			},
			counts: sources,
			// repartition2 (2) and source1 (3) feed the sink: max is 3.
			want: map[string]int32{"repartition1": 4, "repartition2": 2, withoutCount.Name: 3},
		},
		{
			name: "count from upstream internal repartition source topic",
			subs: []Subtopology{
				{
					ID: "subtopology0", SourceTopics: []string{"source1"},
					RepartitionSourceTopics: []TopicInfo{repartition1},
					RepartitionSinkTopics:   []string{withoutCount.Name},
				},
				{
					ID:                      "subtopologyWithoutPartitionCount",
					RepartitionSourceTopics: []TopicInfo{withoutCount},
					RepartitionSinkTopics:   []string{repartition1.Name},
				},
			},
			counts: sources,
			want:   map[string]int32{"repartition1": 4, withoutCount.Name: 4},
		},
		{
			name:   "no repartition topics",
			subs:   []Subtopology{{ID: "subtopology0", SourceTopics: []string{"source1"}}},
			counts: sources,
			want:   map[string]int32{},
		},
		{
			name: "chain resolved over several iterations",
			subs: []Subtopology{
				// Listed downstream first so one pass cannot resolve it.
				{ID: "2", RepartitionSourceTopics: []TopicInfo{{Name: "r2"}}, RepartitionSinkTopics: []string{"r3"}},
				{ID: "1", RepartitionSourceTopics: []TopicInfo{{Name: "r1"}}, RepartitionSinkTopics: []string{"r2"}},
				{ID: "0", SourceTopics: []string{"source1"}, RepartitionSinkTopics: []string{"r1"}},
				{ID: "3", RepartitionSourceTopics: []TopicInfo{{Name: "r3"}}},
			},
			counts: sources,
			want:   map[string]int32{"r1": 3, "r2": 3, "r3": 3},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := repartitionPartitionCounts(tc.subs, tc.counts)
			wantErr(t, err, tc.err)
			if err == nil {
				wantEqual(t, "counts", got, tc.want)
			}
		})
	}
}
