package topology

import (
	"fmt"
	"strings"
)

// Validate checks a topology as Kafka 4.4 does when a member joins with it,
// before any metadata is consulted. It runs, in Kafka's order, the three
// checks below; a coordinator that interleaves Kafka's other request checks
// (MemberId, GroupId, task lists, …) calls them one by one instead:
//
//   - ValidateTopicNames, KafkaApis' gate, before anything else;
//   - ValidateSupported, GroupCoordinatorService's unsupported-features
//     check, first in the service;
//   - ValidateDefinition, its throwIfInvalidTopology, at epoch 0 after the
//     request's other join checks.
//
// The error is a *Error with ErrorCode set, or nil.
func Validate(t Topology) error {
	if err := ValidateTopicNames(t); err != nil {
		return err
	}
	if err := ValidateSupported(t); err != nil {
		return err
	}
	return ValidateDefinition(t)
}

// ValidateTopicNames is KafkaApis' check: no Kafka-internal topic
// (__consumer_offsets, __transaction_state, __share_group_state) and only
// valid topic names among all source, repartition and changelog topics,
// else STREAMS_INVALID_TOPOLOGY.
func ValidateTopicNames(t Topology) error {
	if err := validateTopicNames(t); err != nil {
		return err
	}
	return nil
}

// ValidateSupported rejects SourceTopicRegex with INVALID_REQUEST, as
// Kafka 4.4 does ("not supported yet").
func ValidateSupported(t Topology) error {
	for _, s := range t.Subtopologies {
		if len(s.SourceTopicRegex) > 0 {
			return invalidRequest("Regular expressions for source topics are not supported yet.")
		}
	}
	return nil
}

// ValidateDefinition rejects changelog topics with a partition count
// (STREAMS_INVALID_TOPOLOGY, as Kafka). Two checks are streamshift's own,
// where Kafka would fail later with an internal error
// (UNKNOWN_SERVER_ERROR): copartition indices out of range and duplicate
// subtopology ids, both STREAMS_INVALID_TOPOLOGY.
func ValidateDefinition(t Topology) error {
	if err := validateDefinition(t); err != nil {
		return err
	}
	return nil
}

func validateTopicNames(t Topology) *Error {
	var topics []string
	seen := make(map[string]bool)
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			topics = append(topics, name)
		}
	}
	for _, s := range t.Subtopologies {
		for _, n := range s.SourceTopics {
			add(n)
		}
		for _, n := range s.RepartitionSinkTopics {
			add(n)
		}
		for _, r := range s.RepartitionSourceTopics {
			add(r.Name)
		}
		for _, c := range s.StateChangelogTopics {
			add(c.Name)
		}
	}
	var internal, invalid []string
	for _, n := range topics {
		if isInternalTopic(n) {
			internal = append(internal, n)
		}
		if !isValidTopicName(n) {
			invalid = append(invalid, n)
		}
	}
	if len(internal) > 0 {
		return invalidTopology("Use of Kafka internal topics " + strings.Join(internal, ",") +
			" in a Kafka Streams topology is prohibited.")
	}
	if len(invalid) > 0 {
		return invalidTopology("Topic names " + strings.Join(invalid, ",") + " are not valid topic names.")
	}
	return nil
}

func validateDefinition(t Topology) *Error {
	for _, s := range t.Subtopologies {
		for _, c := range s.StateChangelogTopics {
			if c.Partitions != 0 {
				return invalidTopology(fmt.Sprintf(
					"Changelog topic %s must have an undefined partition count, but it is set to %d.",
					c.Name, c.Partitions))
			}
		}
	}
	ids := make(map[string]bool, len(t.Subtopologies))
	for _, s := range t.Subtopologies {
		if ids[s.ID] {
			return invalidTopology(fmt.Sprintf("Subtopology %s is defined more than once.", s.ID))
		}
		ids[s.ID] = true
		if _, err := copartitionGroupTopics(s); err != nil {
			return err
		}
	}
	return nil
}

// isInternalTopic is Kafka's Topic.isInternal.
func isInternalTopic(name string) bool {
	switch name {
	case "__consumer_offsets", "__transaction_state", "__share_group_state":
		return true
	}
	return false
}

// isValidTopicName is Kafka's Topic.isValid: 1 to 249 characters out of
// [a-zA-Z0-9._-], and neither "." nor "..".
func isValidTopicName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > 249 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
