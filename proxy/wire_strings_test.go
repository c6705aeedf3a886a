package proxy

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Every string of a decoded request, nested or behind a pointer, is read as
// Kafka reads it; bytes fields keep their bytes.
func TestKafkaStringsDecodesEveryString(t *testing.T) {
	r := kmsg.NewPtrJoinGroupRequest()
	inst := "inst-\xff"
	r.Group, r.MemberID, r.InstanceID, r.ProtocolType = "g-\xfe", "m-\xc3", &inst, "consumer"
	r.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "p-\xf0\x9f", Metadata: []byte("meta-\xff")}}
	kafkaStrings(r)
	if r.Group != "g-\uFFFD" || r.MemberID != "m-\uFFFD" || *r.InstanceID != "inst-\uFFFD" || r.ProtocolType != "consumer" ||
		r.Protocols[0].Name != "p-\uFFFD" || string(r.Protocols[0].Metadata) != "meta-\xff" {
		t.Fatalf("%+v %q", r, *r.InstanceID)
	}
	d := kmsg.NewPtrStreamsGroupDescribeRequest()
	d.Groups = []string{"ok", "bad-\xff\xfe-group"}
	kafkaStrings(d)
	if d.Groups[0] != "ok" || d.Groups[1] != "bad-\uFFFD\uFFFD-group" {
		t.Fatalf("%q", d.Groups)
	}
}
