package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/proxy"
)

// DescribeConfigs (key 32): v0-v4 (the upstream's range, capped to
// kmsg's), unadvertised.
//
// By version: the same at every version; GROUP resources (KIP-848, type
// 32) of served groups are described here, synonyms (v1+) and documentation
// (v3+) filled as the request asks; every other resource goes upstream at
// the client's version.

// describesGroupResource reports whether a DescribeConfigs resource is
// served locally: a GROUP resource of an owned group, or of a group with
// streams.* settings made here before it was owned (the upstream would not
// know them). Every other resource, GROUP ones included (a 3.9 broker does
// not know them), goes upstream as it is.
func (rs *Routes) describesGroupResource(res kmsg.DescribeConfigsRequestResource) bool {
	return res.ResourceType == kmsg.ConfigResourceTypeGroupConfig && (rs.o.Coordinator.Owns(res.ResourceName) || rs.o.Coordinator.HasGroupConfigs(res.ResourceName))
}

// describeConfigs describes the streams.* configs of owned groups' GROUP
// resources locally: overridden ones with source GROUP_CONFIG (what
// `kafka-configs --describe --entity-type groups` prints), the others with
// their default. A mixed request is split; results keep request order. A
// client that may not DESCRIBE_CONFIGS gets GROUP_AUTHORIZATION_FAILED for
// them (authorize_configs.go).
//
// With several instances, the GROUP resources of groups other instances own
// were split off to their owners first (clusterSplit).
func (rs *Routes) describeConfigs(req *proxy.Request, r *kmsg.DescribeConfigsRequest, out proxy.Outcome) {
	owned, upstream := servedHere(r.Resources, rs.describesGroupResource)
	var refused int16
	var refusal string
	if len(upstream) < len(r.Resources) {
		refused, refusal = rs.groupConfigsRefusal(req, kmsg.ACLOperationDescribeConfigs)
	}
	rest := func() kmsg.Request {
		fwd := *r
		fwd.Resources = upstream
		return &fwd
	}
	splitForward(req, out, len(r.Resources)-len(upstream), len(upstream), rest, req.Version, func(dr *kmsg.DescribeConfigsResponse) *kmsg.DescribeConfigsResponse {
		local := answeredHere(owned, func(i int) kmsg.DescribeConfigsResponseResource {
			if refused != 0 {
				res := kmsg.NewDescribeConfigsResponseResource()
				res.ResourceType, res.ResourceName = r.Resources[i].ResourceType, r.Resources[i].ResourceName
				res.ErrorCode, res.ErrorMessage = refused, &refusal
				return res
			}
			return rs.describeGroupResource(r.Resources[i], r.IncludeSynonyms, r.IncludeDocumentation)
		})
		dr.Resources = mergeByPosition(len(r.Resources), local, dr.Resources)
		return dr
	})
}

func (rs *Routes) describeGroupResource(rr kmsg.DescribeConfigsRequestResource, synonyms, docs bool) kmsg.DescribeConfigsResponseResource {
	res := kmsg.NewDescribeConfigsResponseResource()
	res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
	for _, e := range rs.o.Coordinator.DescribeGroupConfigs(rr.ResourceName, rr.ConfigNames) {
		ce := kmsg.NewDescribeConfigsResponseResourceConfig()
		v := e.Value
		ce.Name, ce.Value, ce.ConfigType = e.Name, &v, e.Type
		ce.Source, ce.IsDefault = kmsg.ConfigSourceDefaultConfig, true
		if e.Overridden {
			ce.Source, ce.IsDefault = kmsg.ConfigSourceGroupConfig, false
		}
		if synonyms {
			// Kafka lists the group's own value, then the broker default.
			if e.Overridden {
				syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				syn.Name, syn.Value, syn.Source = ce.Name, ce.Value, kmsg.ConfigSourceGroupConfig
				ce.ConfigSynonyms = append(ce.ConfigSynonyms, syn)
			}
			def := rs.o.Coordinator.DefaultGroupConfigValue(e.Name)
			syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			syn.Name, syn.Value, syn.Source = streams.DefaultGroupConfigName(e.Name), &def, kmsg.ConfigSourceDefaultConfig
			ce.ConfigSynonyms = append(ce.ConfigSynonyms, syn)
		}
		if docs {
			d := e.Doc
			ce.Documentation = &d
		}
		res.Configs = append(res.Configs, ce)
	}
	return res
}
