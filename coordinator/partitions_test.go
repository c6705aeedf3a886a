package coordinator

import "testing"

// The vectors come from Java (JDK 17): s.hashCode(), then Kafka's
// Utils.abs(h) % n for n = 1, 3 and 50 (50 is __consumer_offsets' default).
// The last three ids hash to Integer.MIN_VALUE, which Utils.abs maps to 0.
func TestPartitionForMatchesKafka(t *testing.T) {
	for _, tc := range []struct {
		id   string
		hash int32
		want [3]int32
	}{
		{"", 0, [3]int32{0, 0, 0}},
		{"g", 103, [3]int32{0, 1, 3}},
		{"streams-app", 1643830855, [3]int32{0, 1, 5}},
		{"word-count-4.4", 1086477369, [3]int32{0, 0, 19}},
		{"group-été", -1484026544, [3]int32{0, 2, 44}},
		{"😀emoji", -1233692477, [3]int32{0, 2, 27}},
		{"polygenelubricants", -2147483648, [3]int32{0, 0, 0}},
		{"GydZG_", -2147483648, [3]int32{0, 0, 0}},
		{"DESIGNING WORKHOUSES", -2147483648, [3]int32{0, 0, 0}},
	} {
		if h := javaStringHash(tc.id); h != tc.hash {
			t.Errorf("hash(%q) = %d, Java says %d", tc.id, h, tc.hash)
		}
		for i, n := range []int32{1, 3, 50} {
			if got := PartitionFor(tc.id, n); got != tc.want[i] {
				t.Errorf("PartitionFor(%q, %d) = %d, Kafka says %d", tc.id, n, got, tc.want[i])
			}
		}
	}
}
