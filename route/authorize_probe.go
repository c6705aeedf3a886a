package route

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/proxy/peer"
)

// A probe is the request authorize.go's doc lists for one resource type and
// operation; its answers say which names the broker denies.

// probeMemberID is the member id of the READ probe: no member has it, so
// the broker's coordinator changes nothing.
const probeMemberID = "streamshift-authorization-probe"

// probing is a probe: its asks and how to read their answers.
type probing struct {
	req  *proxy.Request
	asks []probeAsk
	sent []*proxy.Pending // the first asks, sent already (start)
	read func(resps []kmsg.Response) map[string]bool
	err  error
}

type probeAsk struct {
	r       kmsg.Request
	version int16
}

// probeChunk bounds the asks of one probe in flight at once (one per group
// for READ and DELETE), below the proxy's per-connection bound with room
// for a background refresh.
const probeChunk = 4

// start sends the first chunk of asks now: they are queued on the
// client's connection before start returns.
func (p *probing) start() {
	for _, q := range p.asks[:min(len(p.asks), probeChunk)] {
		p.sent = append(p.sent, p.req.Send(q.r, q.version))
	}
}

// wait sends what start did not, a chunk at a time, and returns the names
// denied.
func (p *probing) wait(ctx context.Context) (map[string]bool, error) {
	if p.err != nil {
		return nil, p.err
	}
	resps := make([]kmsg.Response, len(p.asks))
	for from := 0; from < len(p.asks); from += probeChunk {
		to := min(from+probeChunk, len(p.asks))
		for i := len(p.sent); i < to; i++ {
			p.sent = append(p.sent, p.req.Send(p.asks[i].r, p.asks[i].version))
		}
		for i := from; i < to; i++ {
			resp, err := p.sent[i].Wait(ctx)
			if err != nil {
				return nil, err
			}
			resps[i] = resp
		}
	}
	return p.read(resps), nil
}

// probe is the probe about names; nothing is sent yet.
func (a *authorizer) probe(req *proxy.Request, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string) *probing {
	p := &probing{req: req}
	send := func(r kmsg.Request, version int16) { p.asks = append(p.asks, probeAsk{r, version}) }
	switch {
	case rt == kmsg.ACLResourceTypeGroup && op == kmsg.ACLOperationRead:
		for _, g := range names {
			v := min(a.versions(int16(kmsg.Heartbeat)), 4)
			send(peer.GroupReadProbe(g, probeMemberID, v), v)
		}
		p.read = func(resps []kmsg.Response) map[string]bool {
			return denials(kerr.GroupAuthorizationFailed, len(resps), func(i int) (string, int16) {
				return names[i], resps[i].(*kmsg.HeartbeatResponse).ErrorCode
			})
		}
	case rt == kmsg.ACLResourceTypeGroup && op == kmsg.ACLOperationDescribe:
		dg := kmsg.NewPtrDescribeGroupsRequest()
		dg.Groups = names
		send(dg, min(a.versions(int16(kmsg.DescribeGroups)), 5))
		p.read = func(resps []kmsg.Response) map[string]bool {
			gs := resps[0].(*kmsg.DescribeGroupsResponse).Groups
			return denials(kerr.GroupAuthorizationFailed, len(gs), func(i int) (string, int16) { return gs[i].Group, gs[i].ErrorCode })
		}
	case rt == kmsg.ACLResourceTypeGroup && op == kmsg.ACLOperationDelete:
		// An OffsetDelete of no partition: Kafka checks DELETE on the
		// group first, and there is nothing to delete after.
		for _, g := range names {
			od := kmsg.NewPtrOffsetDeleteRequest()
			od.Group = g
			od.Topics = []kmsg.OffsetDeleteRequestTopic{}
			send(od, 0)
		}
		p.read = func(resps []kmsg.Response) map[string]bool {
			return denials(kerr.GroupAuthorizationFailed, len(resps), func(i int) (string, int16) {
				return names[i], resps[i].(*kmsg.OffsetDeleteResponse).ErrorCode
			})
		}
	case rt == kmsg.ACLResourceTypeTopic && op == kmsg.ACLOperationDescribe:
		md := kmsg.NewPtrMetadataRequest()
		for _, t := range names {
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr(t)
			md.Topics = append(md.Topics, mt)
		}
		md.AllowAutoTopicCreation = false
		send(md, max(min(a.versions(int16(kmsg.Metadata)), 12), 4))
		p.read = func(resps []kmsg.Response) map[string]bool {
			ts := resps[0].(*kmsg.MetadataResponse).Topics
			return denials(kerr.TopicAuthorizationFailed, len(ts), func(i int) (string, int16) { return deref(ts[i].Topic), ts[i].ErrorCode })
		}
	case rt == kmsg.ACLResourceTypeTopic && op == kmsg.ACLOperationCreate:
		ct := kmsg.NewPtrCreateTopicsRequest()
		ct.ValidateOnly = true
		ct.TimeoutMillis = 10000
		for _, t := range names {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t, -1, -1
			ct.Topics = append(ct.Topics, rt)
		}
		send(ct, max(min(a.versions(int16(kmsg.CreateTopics)), 7), 4))
		p.read = func(resps []kmsg.Response) map[string]bool {
			ts := resps[0].(*kmsg.CreateTopicsResponse).Topics
			return denials(kerr.TopicAuthorizationFailed, len(ts), func(i int) (string, int16) { return ts[i].Topic, ts[i].ErrorCode })
		}
	case rt == kmsg.ACLResourceTypeCluster && (op == kmsg.ACLOperationDescribeConfigs || op == kmsg.ACLOperationAlterConfigs) && len(names) == 1:
		a.clusterConfigsProbe(p, op, names)
	default:
		p.err = fmt.Errorf("no probe for %s on %s", op, rt)
	}
	return p
}

// denials reads a probe's n answers: at(i) is the name and error code of
// the i-th; a name is denied when its code is failed's.
func denials(failed *kerr.Error, n int, at func(i int) (name string, code int16)) map[string]bool {
	denied := make(map[string]bool, n)
	for i := range n {
		name, code := at(i)
		denied[name] = code == failed.Code
	}
	return denied
}
