package topology

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := Subtopology{ID: "0", SourceTopics: []string{"in"}, StateChangelogTopics: []TopicInfo{{Name: "app-store-changelog"}}}
	tests := []struct {
		name string
		subs []Subtopology
		err  Error
	}{
		{name: "valid", subs: []Subtopology{ok}},
		{
			name: "internal topics, all of them, in topology order",
			subs: []Subtopology{
				{ID: "0", SourceTopics: []string{"__transaction_state", "in"}, RepartitionSinkTopics: []string{"__consumer_offsets"}},
			},
			err: Error{ErrorCode: ErrStreamsInvalidTopology,
				Message: "Use of Kafka internal topics __transaction_state,__consumer_offsets in a Kafka Streams topology is prohibited."},
		},
		{
			name: "internal topics are reported before invalid names",
			subs: []Subtopology{{ID: "0", SourceTopics: []string{"bad name", "__share_group_state"}}},
			err: Error{ErrorCode: ErrStreamsInvalidTopology,
				Message: "Use of Kafka internal topics __share_group_state in a Kafka Streams topology is prohibited."},
		},
		{
			name: "invalid names",
			subs: []Subtopology{{ID: "0", SourceTopics: []string{"ok", "bad name", "..", ""},
				StateChangelogTopics: []TopicInfo{{Name: strings.Repeat("x", 250)}}}},
			err: Error{ErrorCode: ErrStreamsInvalidTopology,
				Message: "Topic names bad name,..,," + strings.Repeat("x", 250) + " are not valid topic names."},
		},
		{
			name: "source topic regex",
			subs: []Subtopology{ok, {ID: "1", SourceTopicRegex: []string{"in-.*"}}},
			err:  Error{ErrorCode: ErrInvalidRequest, Message: "Regular expressions for source topics are not supported yet."},
		},
		{
			name: "changelog with a partition count",
			subs: []Subtopology{{ID: "0", SourceTopics: []string{"in"}, StateChangelogTopics: []TopicInfo{{Name: "c", Partitions: 4}}}},
			err: Error{ErrorCode: ErrStreamsInvalidTopology,
				Message: "Changelog topic c must have an undefined partition count, but it is set to 4."},
		},
		{
			name: "copartition repartition index out of range",
			subs: []Subtopology{{ID: "0", SourceTopics: []string{"in"},
				CopartitionGroups: []CopartitionGroup{{SourceTopics: []int16{0}, RepartitionSourceTopics: []int16{-1}}}}},
			err: Error{ErrorCode: ErrStreamsInvalidTopology,
				Message: "Copartition group of subtopology 0 refers to repartition source topic index -1, but the subtopology has 0 repartition source topics."},
		},
		{
			name: "duplicate subtopology",
			subs: []Subtopology{ok, ok},
			err:  Error{ErrorCode: ErrStreamsInvalidTopology, Message: "Subtopology 0 is defined more than once."},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(Topology{Subtopologies: tc.subs})
			if tc.err == (Error{}) {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("want *Error, got %v", err)
			}
			wantErr(t, te, tc.err)
		})
	}
}

func TestTopicNameRules(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "A-b_c.9": true, strings.Repeat("x", 249): true,
		"": false, ".": false, "..": false, "a/b": false, "ä": false, strings.Repeat("x", 250): false,
	} {
		if got := isValidTopicName(name); got != want {
			t.Errorf("isValidTopicName(%q) = %v", name, got)
		}
	}
}

// Each step of Validate checks only its own rules, so a coordinator can
// interleave them with Kafka's other request checks.
func TestValidateSteps(t *testing.T) {
	regex := Topology{Subtopologies: []Subtopology{{ID: "0", SourceTopicRegex: []string{".*"}}}}
	changelog := Topology{Subtopologies: []Subtopology{{ID: "0", SourceTopics: []string{"in"},
		StateChangelogTopics: []TopicInfo{{Name: "c", Partitions: 1}}}}}
	internal := Topology{Subtopologies: []Subtopology{{ID: "0", SourceTopics: []string{"__consumer_offsets"}}}}
	steps := []struct {
		name  string
		check func(Topology) error
		fails Topology
	}{
		{"names", ValidateTopicNames, internal},
		{"supported", ValidateSupported, regex},
		{"definition", ValidateDefinition, changelog},
	}
	for _, st := range steps {
		for _, other := range steps {
			err := st.check(other.fails)
			if (st.name == other.name) != (err != nil) {
				t.Errorf("%s on the %s failure: %v", st.name, other.name, err)
			}
		}
	}
}
