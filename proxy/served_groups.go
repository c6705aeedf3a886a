package proxy

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
	"github.com/streamshift/streamshift/proxy/peer"
)

// served-groups calls (docs/one-address.md §3, §4 "ListGroups"): the
// origin of a client's ListGroups asks every other instance for the groups
// it serves, in a ListGroups (RequestData) whose answer (ResponseData) is a
// ListGroupsResponse of the peer's served groups, unfiltered and with no
// upstream call. A leaf: it never makes further calls.

// servedGroupsVersion is the ListGroups version of served-groups calls: v5
// carries the group's state (v4+) and type (v5+).
const servedGroupsVersion = 5

// ServedGroupsFunc lists the groups this instance serves, as ListGroups
// entries (group, protocol type, state, type), unfiltered.
type ServedGroupsFunc func(ctx context.Context) ([]kmsg.ListGroupsResponseGroup, error)

// SetServedGroups installs the answer to other instances' served-groups
// calls; until then they get envelope COORDINATOR_NOT_AVAILABLE.
func (p *Proxy) SetServedGroups(f ServedGroupsFunc) { p.servedGroups.Store(&f) }

// servedGroupsPeer answers a served-groups call.
func (p *Proxy) servedGroupsPeer(ctx context.Context, c *peer.Call) <-chan peer.Answer {
	ch := make(chan peer.Answer, 1)
	f := p.servedGroups.Load()
	if f == nil {
		ch <- peer.Answer{Code: kerr.CoordinatorNotAvailable.Code}
		return ch
	}
	if c.Key != int16(kmsg.ListGroups) || c.Version < 0 || c.Version > kmsg.NewPtrListGroupsResponse().MaxVersion() {
		ch <- peer.Answer{Code: kerr.UnsupportedVersion.Code}
		return ch
	}
	go func() {
		groups, err := (*f)(ctx)
		if err != nil {
			ch <- peer.Answer{Code: kerr.CoordinatorNotAvailable.Code}
			return
		}
		resp := kmsg.NewPtrListGroupsResponse()
		resp.SetVersion(c.Version)
		resp.Groups = groups
		ch <- peer.Answer{Data: kafkaframe.AppendResponse(nil, c.Corr, resp)[4:]}
	}()
	return ch
}

// ServedGroups asks the peer of link for the groups it serves (a
// served-groups call on behalf of the client of req). timeout ≤ 0 is the
// link's. Its error carries the envelope's code (peer.ErrorCode).
func (p *Proxy) ServedGroups(ctx context.Context, link *peer.Link, req *Request, timeout time.Duration) ([]kmsg.ListGroupsResponseGroup, error) {
	c := req.Client
	clientID := c.ClientID
	pr := peer.ConnPrincipal{
		Version: peer.PrincipalVersion, Kind: peer.KindServedGroups, Origin: link.Self(), Incarnation: p.incarnation,
		ConnID: int64(c.ConnID), Node: c.Node, ClientID: &clientID, SoftwareName: c.SoftwareName,
		SoftwareVersion: c.SoftwareVersion, RemoteAddr: c.RemoteAddr, Partition: -1,
	}
	list := kmsg.NewPtrListGroupsRequest()
	list.SetVersion(servedGroupsVersion)
	data := kafkaframe.AppendRequest(nil, req.CorrelationID, &clientID, list)[4:]
	resp, err := link.Call(ctx, pr, data, clientHostAddress(c.RemoteAddr), timeout)
	if err != nil {
		return nil, err
	}
	if len(resp) < 4 || int32(binary.BigEndian.Uint32(resp)) != req.CorrelationID {
		return nil, &peer.Error{Peer: link.Peer(), Code: kerr.CoordinatorNotAvailable.Code, Reason: fmt.Sprintf("answered %d bytes not of correlation id %d", len(resp), req.CorrelationID)}
	}
	lr, err := kafkaframe.DecodeResponse(int16(kmsg.ListGroups), servedGroupsVersion, resp)
	if err != nil {
		return nil, &peer.Error{Peer: link.Peer(), Code: kerr.CoordinatorNotAvailable.Code, Reason: fmt.Sprintf("served groups: %v", err)}
	}
	return lr.(*kmsg.ListGroupsResponse).Groups, nil
}

// DecodeResponse decodes a response of key at version from its frame
// (header and body, no size prefix): a serve call's answer, whose entries
// the origin merges with others.
func DecodeResponse(key, version int16, frame []byte) (kmsg.Response, error) {
	return kafkaframe.DecodeResponse(key, version, frame)
}

// WithBody is the request with another body of the same key and version
// (a part of a request split by owner): the same client, connection and
// correlation id, so its asks, forwards and serve call are the client's.
func (r *Request) WithBody(body kmsg.Request) *Request {
	body.SetVersion(r.Version)
	c := *r
	c.Body = body
	c.frame, c.bodyAt = nil, 0 // the client's bytes are not this body's
	return &c
}
