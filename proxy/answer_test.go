package proxy

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// An intercepted request whose decoding would exhaust the memory budget,
// on a connection above its share, is refused before it is decoded and
// before its interceptor runs (issue #42: a decode is several times the
// frame, and was judged only after it was made).
func TestInterceptedDecodeJudgedBeforeItIsMade(t *testing.T) {
	t.Parallel()
	up := startFakeBroker(t, serveControl)
	p := startProxy(t, []string{up.addr()}, func(o *Options) { o.MaxBufferedBytes = 1 << 20 })
	if err := p.Register(int16(kmsg.JoinGroup), 0, 9, false, InterceptorFunc(func(_ *Request, out Outcome) {
		t.Error("interceptor called for a request whose decoding the budget cannot take")
		out.Forward()
	})); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.ProtocolType = 5, "g", "consumer"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: make([]byte, 200<<10)}}
	frame := kafkaframe.AppendRequest(nil, 1, nil, req)
	if 8*len(frame) <= 1<<20 {
		t.Fatalf("a %d-byte frame fits the budget decoded", len(frame))
	}
	c := dialRaw(t, p.addr)
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	c.expectClosed()
	if got := counterValue(t, p.m.connsClosed.WithLabelValues("memory")); got < 1 {
		t.Errorf("connections closed for memory: %v, want 1", got)
	}
	if got := counterValue(t, p.m.intercepted); got != 0 {
		t.Errorf("%v requests decoded for an interceptor, want 0", got)
	}
}
