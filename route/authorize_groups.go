package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// The group requests streamshift serves for a group of its own go through
// the broker's ACLs here first. Where the request can also go upstream
// untouched (the classic group keys, the commits, the offset fetches), a
// request the client's principal may not make is simply forwarded: the
// broker refuses it with Kafka's own answer (GROUP_AUTHORIZATION_FAILED,
// or TRANSACTIONAL_ID_AUTHORIZATION_FAILED first for a TxnOffsetCommit),
// and a refused request changes nothing upstream.

// groupReadDenied reports whether the client of req may not READ group,
// the check Kafka makes first for JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup, OffsetCommit and TxnOffsetCommit (after the transactional
// id).
func (rs *Routes) groupReadDenied(req *proxy.Request, group string) (bool, error) {
	ok, err := rs.auth.allowed(req, kmsg.ACLResourceTypeGroup, kmsg.ACLOperationRead, group)
	return !ok && err == nil, err
}

// groupDescribeDenied is groupReadDenied for DESCRIBE, OffsetFetch's and
// DescribeGroups' check.
func (rs *Routes) groupDescribeDenied(req *proxy.Request, group string) (bool, error) {
	ok, err := rs.auth.allowed(req, kmsg.ACLResourceTypeGroup, kmsg.ACLOperationDescribe, group)
	return !ok && err == nil, err
}

// groupsDenied returns the set of groups the client of req may not do op on
// (nil when all are allowed). When the broker could not be asked, all
// count as denied: the requests this serves then go to the broker, which
// decides itself.
func (rs *Routes) groupsDenied(req *proxy.Request, op kmsg.ACLOperation, groups []string) map[string]bool {
	if len(groups) == 0 {
		return nil
	}
	denied, err := rs.auth.denied(req, kmsg.ACLResourceTypeGroup, op, groups)
	if err != nil {
		rs.o.Log.Debug().Err(err).Msg("group authorization not asked; the broker decides")
		denied = groups
	}
	if len(denied) == 0 {
		return nil
	}
	out := make(map[string]bool, len(denied))
	for _, g := range denied {
		out[g] = true
	}
	return out
}
