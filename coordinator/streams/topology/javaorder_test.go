package topology

import (
	"fmt"
	"testing"
)

func TestJavaStringHash(t *testing.T) {
	// Values of "x".hashCode() printed by Java 17.
	for s, want := range map[string]int32{
		"": 0, "0": 48, "10": 1567, "hello": 99162322,
		"source_topic1": 270346630, "a-very-long-topic-name-for-overflow": -1548860956,
	} {
		if got := javaStringHash(s); got != want {
			t.Errorf("hash(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestJavaHashOrder(t *testing.T) {
	// HashSet iteration orders printed by Java 17 after adding the names
	// in order.
	tests := []struct{ in, want []string }{
		{[]string{"0", "1", "2", "10", "11", "12"}, []string{"0", "11", "1", "12", "2", "10"}},
		{[]string{"b", "a", "c"}, []string{"a", "b", "c"}},
	}
	var many []string
	for i := range 30 {
		many = append(many, fmt.Sprintf("app-KSTREAM-AGGREGATE-STATE-STORE-00000000%d-changelog", i))
	}
	var want []string
	for _, i := range []int{18, 4, 6, 22, 0, 26, 9, 13, 16, 29, 7, 11, 24, 2, 5, 19, 10, 23, 21, 15, 27, 14, 1, 28, 20, 3, 12, 25, 17, 8} {
		want = append(want, fmt.Sprintf("app-KSTREAM-AGGREGATE-STATE-STORE-00000000%d-changelog", i))
	}
	tests = append(tests, struct{ in, want []string }{many, want})
	for _, tc := range tests {
		wantEqual(t, "order", javaHashOrder(tc.in), tc.want)
	}
}
