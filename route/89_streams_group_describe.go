package route

import "github.com/streamshift/streamshift/proxy"

// streamsGroupDescribe serves StreamsGroupDescribe v0-v1, advertised
// whatever the upstream knows, from the coordinator, for every group:
// the coordinator answers for a group it does not hold as Kafka does.
// Handle takes every request of this key; Forward is only the answer to a
// request it would not take.
func (rs *Routes) streamsGroupDescribe(req *proxy.Request, out proxy.Outcome) {
	if !rs.o.Coordinator.Handle(req.Body, coordinatorClient(req), out.Respond) {
		out.Forward()
	}
}
