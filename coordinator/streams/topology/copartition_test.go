package topology

import "testing"

// Mirrors Kafka's CopartitionedTopicsEnforcerTest.
func TestEnforceCopartitioning(t *testing.T) {
	const (
		r1, r2, r3 = "repartitioned-1", "repartitioned-2", "repartitioned-3"
		s1, s2     = "source-1", "source-2"
	)
	set := func(names ...string) map[string]bool {
		m := make(map[string]bool)
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	tests := []struct {
		name            string
		counts          map[string]int32
		group           []string
		fixed, flexible map[string]bool
		want            map[string]int32
		err             Error
	}{
		{
			name:  "no partitions found for a copartitioned topic",
			group: []string{s1},
			err:   Error{ErrorCode: ErrUnknownServerError, Message: "Number of partitions is not set for topic: source-1"},
		},
		{
			name:   "external topics disagree",
			counts: map[string]int32{s1: 2, s2: 1},
			group:  []string{s1, s2},
			err: Error{Status: StatusIncorrectlyPartitionedTopics,
				Message: "Following topics do not have the same number of partitions: [{source-1=2, source-2=1}]"},
		},
		{
			name:     "repartition topic follows the external topics",
			counts:   map[string]int32{s1: 2, s2: 2, r1: 10},
			group:    []string{s1, s2, r1},
			flexible: set(r1),
			want:     map[string]int32{r1: 2},
		},
		{
			name:     "only repartition topics: the maximum",
			counts:   map[string]int32{r1: 1, r2: 15, r3: 5},
			group:    []string{r1, r2, r3},
			flexible: set(r1, r2, r3),
			want:     map[string]int32{r1: 15, r2: 15, r3: 15},
		},
		{
			name:   "fixed repartition topics disagree",
			counts: map[string]int32{r1: 10, r2: 5},
			group:  []string{r1, r2},
			fixed:  set(r1, r2),
			err: Error{Status: StatusIncorrectlyPartitionedTopics,
				Message: "Following topics do not have the same number of partitions: [{repartitioned-1=10, repartitioned-2=5}]"},
		},
		{
			name:     "flexible repartition topics agreeing stay unchanged",
			counts:   map[string]int32{r1: 10, r2: 10},
			group:    []string{r1, r2},
			flexible: set(r1, r2),
			want:     map[string]int32{r1: 10, r2: 10},
		},
		{
			name:   "fixed repartition topic disagrees with external topic",
			counts: map[string]int32{r1: 10, s1: 2},
			group:  []string{r1, s1},
			fixed:  set(r1),
			err: Error{Status: StatusIncorrectlyPartitionedTopics,
				Message: "Number of partitions [10] of repartition topic [repartitioned-1] doesn't match number of partitions [2] of the source topic."},
		},
		{
			name:     "repartition topic agreeing with external topic",
			counts:   map[string]int32{r1: 2, s1: 2},
			group:    []string{r1, s1},
			flexible: set(r1),
			want:     map[string]int32{r1: 2},
		},
		{
			name:     "count deduced from fixed repartition topics",
			counts:   map[string]int32{r1: 2, r2: 5, r3: 2},
			group:    []string{r1, r2, r3},
			fixed:    set(r1, r3),
			flexible: set(r2),
			want:     map[string]int32{r1: 2, r2: 2, r3: 2},
		},
		{
			name:  "empty group",
			group: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := enforceCopartitioning(tc.group, tc.fixed, tc.flexible, counts(tc.counts))
			wantErr(t, err, tc.err)
			if err == nil && tc.want != nil {
				wantEqual(t, "counts", got, tc.want)
			}
		})
	}
}
