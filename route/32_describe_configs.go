package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/proxy"
)

// describesGroupResource reports whether a DescribeConfigs resource is
// served locally: a GROUP resource of an owned group, or of a group with
// streams.* settings made here before it was owned (the upstream would not
// know them). Every other resource, GROUP ones included (a 3.9 broker does
// not know them), goes upstream as it is.
func (rs *Routes) describesGroupResource(typ kmsg.ConfigResourceType, name string) bool {
	return typ == kmsg.ConfigResourceTypeGroupConfig && (rs.o.Coordinator.Owns(name) || rs.o.Coordinator.HasGroupConfigs(name))
}

// describeConfigs describes the streams.* configs of owned groups' GROUP
// resources locally: overridden ones with source GROUP_CONFIG (what
// `kafka-configs --describe --entity-type groups` prints), the others with
// their default. A mixed request is split; results keep request order.
func (rs *Routes) describeConfigs(req *proxy.Request, out proxy.Outcome) {
	r := req.Body.(*kmsg.DescribeConfigsRequest)
	owned := make([]bool, len(r.Resources))
	var upstream []kmsg.DescribeConfigsRequestResource
	for i, res := range r.Resources {
		if owned[i] = rs.describesGroupResource(res.ResourceType, res.ResourceName); !owned[i] {
			upstream = append(upstream, res)
		}
	}
	if len(upstream) == len(r.Resources) {
		out.Forward()
		return
	}
	merge := func(up []kmsg.DescribeConfigsResponseResource) []kmsg.DescribeConfigsResponseResource {
		local := func(i int) (kmsg.DescribeConfigsResponseResource, bool) {
			if !owned[i] {
				return kmsg.DescribeConfigsResponseResource{}, false
			}
			return rs.describeGroupResource(r.Resources[i], r.IncludeSynonyms, r.IncludeDocumentation), true
		}
		return mergeByPosition(len(r.Resources), local, up)
	}
	if len(upstream) == 0 {
		resp := kmsg.NewPtrDescribeConfigsResponse()
		resp.Resources = merge(nil)
		out.Respond(resp)
		return
	}
	fwd := *r
	fwd.Resources = upstream
	out.ForwardRewritten(&fwd, req.Version, func(resp kmsg.Response) kmsg.Response {
		dr := resp.(*kmsg.DescribeConfigsResponse)
		dr.Resources = merge(dr.Resources)
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
			syn.Name, syn.Value, syn.Source = coordinator.DefaultGroupConfigName(e.Name), &def, kmsg.ConfigSourceDefaultConfig
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
