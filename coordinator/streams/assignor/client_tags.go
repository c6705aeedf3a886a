package assignor

import (
	"sort"
	"strings"
)

// ConfigRackAwareAssignmentTags is the GroupSpec.Configs key of the client
// tag keys standby replicas are spread over (comma-separated), Kafka's
// rack.aware.assignment.tags.
const ConfigRackAwareAssignmentTags = "rack.aware.assignment.tags"

// Rack-aware standbys, beyond Kafka 4.4 (whose sticky assignor ignores the
// tags): with rack.aware.assignment.tags, each standby replica of a task
// goes to a process whose value of every tag key differs from the values of
// the processes already holding the task (its active and earlier
// replicas), as classic Kafka Streams' ClientTagAwareStandbyTaskAssignor
// does. A key whose values are all in use no longer constrains (there are
// more replicas than, say, zones); a replica no process with distinct tags
// can take goes to the least-loaded process lacking the task (assignStandby).

// ParseList reads a comma-separated list ("" is empty): the tag keys, as
// Kafka's LIST configs are written.
func ParseList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// initTags interns every process's value of each tag key (the first
// member's, by member order: members of a process share its tags; a
// missing tag is the value "").
func (s *stickyState) initTags(spec GroupSpec, keys []string) {
	s.tagKeys = keys
	s.tagVal = make([]int32, len(s.procs)*len(keys))
	s.tagValues = make([]int32, len(keys))
	for k, key := range keys {
		vals := map[string]int32{}
		names := make([]string, 0)
		for _, pr := range s.procs {
			v := spec.Members[s.memberIDs[pr.members[0]]].ClientTags[key]
			if _, ok := vals[v]; !ok {
				vals[v] = 0
				names = append(names, v)
			}
		}
		sort.Strings(names)
		for i, n := range names {
			vals[n] = int32(i)
		}
		for p, pr := range s.procs {
			s.tagVal[p*len(keys)+k] = vals[spec.Members[s.memberIDs[pr.members[0]]].ClientTags[key]]
		}
		s.tagValues[k] = int32(len(names))
	}
}

// tagsDistinct reports whether process p's tags differ, key by key, from
// those of every holder of task t, ignoring keys whose values the holders
// already use up.
func (s *stickyState) tagsDistinct(p, t int32) bool {
	K := len(s.tagKeys)
	base := int(t) * (1 + s.slots)
	holders := s.holders[base : base+int(s.holdersN[t])]
	for k := 0; k < K; k++ {
		v := s.tagVal[int(p)*K+k]
		clash := false
		var seen [8]int32 // distinct values among the holders (few)
		n := 0
		for _, h := range holders {
			hv := s.tagVal[int(h)*K+k]
			if hv == v {
				clash = true
			}
			dup := false
			for _, x := range seen[:min(n, len(seen))] {
				if x == hv {
					dup = true
				}
			}
			if !dup {
				if n < len(seen) {
					seen[n] = hv
				}
				n++
			}
		}
		if clash && int32(n) < s.tagValues[k] {
			return false
		}
	}
	return true
}
