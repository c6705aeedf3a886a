package harness

import "testing"

// A 2.8 smoke client is given exactly-once v2 under its 2.8 name (its
// StreamsSmokeTest exits on exactly_once_v2); every other guarantee, and every
// guarantee of the other versions, is passed as it is.
func TestSmokeGuarantee(t *testing.T) {
	for _, c := range []struct{ version, in, want string }{
		{Kafka28, "exactly_once_v2", "exactly_once_beta"},
		{Kafka28, "at_least_once", "at_least_once"},
		{Kafka36, "exactly_once_v2", "exactly_once_v2"},
		{Kafka39, "exactly_once_v2", "exactly_once_v2"},
		{Kafka44, "exactly_once_v2", "exactly_once_v2"},
	} {
		if got := smokeGuarantee(c.version, c.in); got != c.want {
			t.Errorf("smokeGuarantee(%s, %s) = %s, want %s", c.version, c.in, got, c.want)
		}
	}
}
