package route

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// Kafka 4.4 checks DESCRIBE_CONFIGS (DescribeConfigs) and ALTER_CONFIGS
// (IncrementalAlterConfigs) on the GROUP resource and answers
// GROUP_AUTHORIZATION_FAILED "Group authorization failed." for that
// resource (ConfigHelper, ControllerApis). A broker before 4.0 has no GROUP
// config resource, so it cannot be asked about the group itself; streamshift
// asks it for the same operation on the CLUSTER instead, which usually only
// operators are granted: stricter than Kafka (a principal allowed on the
// group alone is refused), never looser.

// clusterName is Kafka's name of the CLUSTER resource.
const clusterName = "kafka-cluster"

// groupConfigsDenied reports whether the client of req may not do op
// (DESCRIBE_CONFIGS or ALTER_CONFIGS) on served groups' configs. err: the
// broker could not be asked.
func (rs *Routes) groupConfigsDenied(req *proxy.Request, op kmsg.ACLOperation) (bool, error) {
	ok, err := rs.auth.allowed(req, kmsg.ACLResourceTypeCluster, op, clusterName)
	return !ok && err == nil, err
}

// groupConfigsRefusal is the error of a served GROUP resource the client may
// not describe or alter (code 0: allowed), with Kafka's message.
func (rs *Routes) groupConfigsRefusal(req *proxy.Request, op kmsg.ACLOperation) (int16, string) {
	denied, err := rs.groupConfigsDenied(req, op)
	switch {
	case err != nil:
		return kerr.UnknownServerError.Code, err.Error()
	case denied:
		return kerr.GroupAuthorizationFailed.Code, "Group authorization failed."
	}
	return 0, ""
}

// clusterConfigsProbe asks for DESCRIBE_CONFIGS or ALTER_CONFIGS on the
// cluster with a request about the cluster-wide broker defaults that names
// no config: Kafka checks the operation on the CLUSTER first
// (CLUSTER_AUTHORIZATION_FAILED), and there is nothing to read or change
// after (ValidateOnly, no configs).
func (a *authorizer) clusterConfigsProbe(p *probing, op kmsg.ACLOperation, names []string) {
	if op == kmsg.ACLOperationDescribeConfigs {
		dc := kmsg.NewPtrDescribeConfigsRequest()
		res := kmsg.NewDescribeConfigsRequestResource()
		res.ResourceType, res.ConfigNames = kmsg.ConfigResourceTypeBroker, []string{}
		dc.Resources = append(dc.Resources, res)
		p.asks = append(p.asks, probeAsk{dc, min(a.versions(int16(kmsg.DescribeConfigs)), 4)})
		p.read = func(resps []kmsg.Response) map[string]bool {
			rs := resps[0].(*kmsg.DescribeConfigsResponse).Resources
			return map[string]bool{names[0]: len(rs) > 0 && rs[0].ErrorCode == kerr.ClusterAuthorizationFailed.Code}
		}
		return
	}
	ac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ac.ValidateOnly = true
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.Configs = kmsg.ConfigResourceTypeBroker, []kmsg.IncrementalAlterConfigsRequestResourceConfig{}
	ac.Resources = append(ac.Resources, res)
	p.asks = append(p.asks, probeAsk{ac, min(a.versions(int16(kmsg.IncrementalAlterConfigs)), 1)})
	p.read = func(resps []kmsg.Response) map[string]bool {
		rs := resps[0].(*kmsg.IncrementalAlterConfigsResponse).Resources
		return map[string]bool{names[0]: len(rs) > 0 && rs[0].ErrorCode == kerr.ClusterAuthorizationFailed.Code}
	}
}
