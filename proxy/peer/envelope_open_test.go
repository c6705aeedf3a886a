package peer

import (
	"errors"
	"net"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// TestOpenEnvelopeMalformed: what the listener answers an envelope it cannot
// open, with Kafka's codes (KafkaApis.handleEnvelope: a principal the serde
// cannot read is PRINCIPAL_DESERIALIZATION_FAILURE; a bad client address or
// wrapped header is INVALID_REQUEST).
func TestOpenEnvelopeMalformed(t *testing.T) {
	p := samplePrincipal()
	cid := "app-1"
	inner := kafkaframe.AppendRequest(nil, 5, &cid, &kmsg.HeartbeatRequest{Version: 4, Group: "g"})[4:]
	nested := kafkaframe.AppendRequest(nil, 5, &cid, EnvelopeRequest(&p, inner, net.IPv4(10, 0, 0, 9)))[4:]
	ok := EnvelopeRequest(&p, inner, net.IPv4(10, 0, 0, 9))
	for name, tc := range map[string]struct {
		mut  func(r *kmsg.EnvelopeRequest)
		code int16
	}{
		"ok":              {func(*kmsg.EnvelopeRequest) {}, 0},
		"principal":       {func(r *kmsg.EnvelopeRequest) { r.RequestPrincipal = r.RequestPrincipal[:3] }, kerr.PrincipalDeserializationFailure.Code},
		"no principal":    {func(r *kmsg.EnvelopeRequest) { r.RequestPrincipal = nil }, kerr.PrincipalDeserializationFailure.Code},
		"address 5 bytes": {func(r *kmsg.EnvelopeRequest) { r.ClientHostAddress = []byte{1, 2, 3, 4, 5} }, kerr.InvalidRequest.Code},
		"no header":       {func(r *kmsg.EnvelopeRequest) { r.RequestData = []byte{0, 12} }, kerr.InvalidRequest.Code},
		"unknown key":     {func(r *kmsg.EnvelopeRequest) { r.RequestData = []byte{0x7f, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff} }, kerr.InvalidRequest.Code},
		"nested":          {func(r *kmsg.EnvelopeRequest) { r.RequestData = nested }, kerr.InvalidRequest.Code},
	} {
		req := *ok
		tc.mut(&req)
		c, code, err := openEnvelope(&req)
		if code != tc.code || (code == 0) != (err == nil) {
			t.Errorf("%s: code %d err %v, want code %d", name, code, err, tc.code)
			continue
		}
		if code == 0 && (c.Key != int16(kmsg.Heartbeat) || c.Corr != 5 || c.Principal.Origin != "p1" || !c.ClientIP.Equal(net.IPv4(10, 0, 0, 9))) {
			t.Errorf("%s: opened %+v", name, c)
		}
	}
}

func FuzzConnPrincipal(f *testing.F) {
	p := samplePrincipal()
	f.Add(p.AppendTo(nil))
	p.ClientID, p.Kind, p.Version = nil, KindServedGroups, 2
	f.Add(append(p.AppendTo(nil), 1, 2, 3))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var p ConnPrincipal
		if err := p.ReadFrom(b); err != nil {
			if !errors.Is(err, ErrMalformedPrincipal) {
				t.Fatalf("error %v does not say malformed", err)
			}
			return
		}
		// What reads must write back to the same fields (the bytes may
		// differ: trailing fields are skipped, varints may be padded).
		var again ConnPrincipal
		if err := again.ReadFrom(p.AppendTo(nil)); err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("re-encoded %+v read back as %+v (%v)", p, again, err)
		}
		// An envelope carrying these bytes opens or answers a code.
		req := kmsg.NewPtrEnvelopeRequest()
		req.RequestPrincipal, req.ClientHostAddress, req.RequestData = b, []byte{127, 0, 0, 1}, b
		if _, code, err := openEnvelope(req); (code == 0) != (err == nil) {
			t.Fatalf("code %d with error %v", code, err)
		}
	})
}
