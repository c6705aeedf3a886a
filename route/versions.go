package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// offsetsMaxVersion is the newest OffsetCommit/OffsetFetch the routes
// serve: v9 is what streams members need (member epochs). v10 names topics
// by id only; intercepting it would need an id <-> name map kept in step
// with the upstream's topics for validation, the anchor rewrite and
// down-conversion, for no gain, since a client that gets v9 advertised
// speaks v9 (Kafka clients since 2.x pick the highest common version). So
// the proxy caps both keys at v9 instead of forwarding v10 past the routes,
// where a streams group's commit would skip validation and, for an owned
// group, fail upstream (its members are not the upstream group's).
const offsetsMaxVersion = 9

// txnOffsetsMaxVersion is the newest TxnOffsetCommit the routes serve: v6
// names topics by id only, so it is capped as OffsetCommit v10 is. v5 is the
// KIP-890 version; the upstream's range applies below it.
const txnOffsetsMaxVersion = 5

// upstreamMax is the newest version of key the upstream speaks, capped to
// what kmsg knows.
func (rs *Routes) upstreamMax(key int16) int16 {
	top := kmsg.RequestForKey(key).MaxVersion()
	if v, ok := rs.o.UpstreamMaxVersions[key]; ok && v < top {
		return v
	}
	return top
}

// forwardAt forwards a request untouched, or re-encoded at the upstream's
// newest version when the client used a newer one (the routes advertise
// offset versions the upstream may lack).
func forwardAt(req *proxy.Request, out proxy.Outcome, up int16) {
	if req.Version <= up {
		out.Forward()
		return
	}
	if fr, ok := req.Body.(*kmsg.OffsetFetchRequest); ok {
		down, err := offsetFetchDown(fr, up)
		if err != nil {
			out.Respond(offsetFetchAll(fr, err))
			return
		}
		out.ForwardRewritten(down, up, func(resp kmsg.Response) kmsg.Response { return offsetFetchUp(resp.(*kmsg.OffsetFetchResponse), fr, up) })
		return
	}
	out.ForwardRewritten(req.Body, up, nil)
}
