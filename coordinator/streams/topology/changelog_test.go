package topology

import "testing"

// Mirrors Kafka 4.4's ChangelogTopicsTest.
func TestChangelogPartitionCounts(t *testing.T) {
	three := func(string) (int32, bool) { return 3, true }
	repartition := TopicInfo{Name: "repartition", Configs: []Config{{"config1", "val1"}}}
	changelog := TopicInfo{Name: "changelog1", Configs: []Config{{"config1", "val1"}}}
	sourceChangelog := TopicInfo{Name: "source", Configs: []Config{{"config1", "val1"}}}
	tests := []struct {
		name  string
		sub   Subtopology
		count countFunc
		want  map[string]int32
		err   Error
	}{
		{
			name:  "no source and no repartition source topics",
			sub:   Subtopology{ID: "SUBTOPOLOGY_NO_SOURCE", RepartitionSinkTopics: []string{"sink"}},
			count: three,
			err:   Error{ErrorCode: ErrStreamsInvalidTopology, Message: "No source topics found for subtopology SUBTOPOLOGY_NO_SOURCE"},
		},
		{
			name:  "only repartition sources",
			sub:   Subtopology{ID: "s", RepartitionSinkTopics: []string{"sink"}, RepartitionSourceTopics: []TopicInfo{repartition}},
			count: three,
			want:  map[string]int32{},
		},
		{
			name:  "only external sources",
			sub:   Subtopology{ID: "s", SourceTopics: []string{"source"}, RepartitionSinkTopics: []string{"sink"}},
			count: three,
			want:  map[string]int32{},
		},
		{
			name:  "stateless",
			sub:   Subtopology{ID: "s", SourceTopics: []string{"source"}, RepartitionSourceTopics: []TopicInfo{repartition}},
			count: three,
			want:  map[string]int32{},
		},
		{
			name: "non-source changelog",
			sub: Subtopology{ID: "s", SourceTopics: []string{"source"}, RepartitionSourceTopics: []TopicInfo{repartition},
				StateChangelogTopics: []TopicInfo{changelog}},
			count: three,
			want:  map[string]int32{"changelog1": 3},
		},
		{
			name: "source changelog",
			sub: Subtopology{ID: "s", SourceTopics: []string{"source"}, RepartitionSourceTopics: []TopicInfo{repartition},
				StateChangelogTopics: []TopicInfo{sourceChangelog}},
			count: three,
			want:  map[string]int32{"source": 3},
		},
		{
			name: "both kinds",
			sub: Subtopology{ID: "s", SourceTopics: []string{"source"}, RepartitionSourceTopics: []TopicInfo{repartition},
				StateChangelogTopics: []TopicInfo{sourceChangelog, changelog}},
			count: three,
			want:  map[string]int32{"source": 3, "changelog1": 3},
		},
		{
			name: "max over source and repartition source topics",
			sub: Subtopology{ID: "s", SourceTopics: []string{"a", "b"}, RepartitionSourceTopics: []TopicInfo{repartition},
				StateChangelogTopics: []TopicInfo{changelog}},
			count: counts(map[string]int32{"a": 2, "b": 5, "repartition": 8}),
			want:  map[string]int32{"changelog1": 8},
		},
		{
			name:  "input without a count is an internal error",
			sub:   Subtopology{ID: "s", SourceTopics: []string{"a"}, StateChangelogTopics: []TopicInfo{changelog}},
			count: counts(nil),
			err:   Error{ErrorCode: ErrUnknownServerError, Message: "No partition count for source topic a"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := changelogPartitionCounts([]Subtopology{tc.sub}, tc.count)
			wantErr(t, err, tc.err)
			if err == nil {
				wantEqual(t, "counts", got, tc.want)
			}
		})
	}
}
