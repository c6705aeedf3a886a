package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/proxy"
)

// IncrementalAlterConfigs (key 44): v0-v1 (the upstream's range, capped to
// kmsg's), unadvertised.
//
// By version: the same at both versions (v1 is flexible): GROUP resources
// of served groups are altered here, the rest goes upstream.

// incrementalAlterConfigs routes IncrementalAlterConfigs at the upstream's
// versions (capped to what kmsg decodes), unadvertised. It alters the
// streams.* configs of the GROUP resources served locally
// (altersGroupResource), validated as Kafka 4.4 validates group configs
// (INVALID_CONFIG with Kafka's messages; a resource's operations apply all
// or nothing). A mixed request is split; results keep request order. A
// client that may not ALTER_CONFIGS gets GROUP_AUTHORIZATION_FAILED for them
// and changes nothing (authorize_configs.go).
//
// With several instances, the GROUP resources of groups other instances own
// were split off to their owners first (clusterSplit).
func (rs *Routes) incrementalAlterConfigs(req *proxy.Request, r *kmsg.IncrementalAlterConfigsRequest, out proxy.Outcome) {
	owned, upstream := servedHere(r.Resources, rs.altersGroupResource)
	// The alterations apply before the rest goes upstream, as a broker
	// answers once it has applied them.
	local := make(map[int]kmsg.IncrementalAlterConfigsResponseResource, len(r.Resources)-len(upstream))
	var refused int16
	var refusal string
	if len(upstream) < len(r.Resources) {
		refused, refusal = rs.groupConfigsRefusal(req, kmsg.ACLOperationAlterConfigs)
	}
	for i, rr := range r.Resources {
		switch {
		case !owned[i]:
		case refused != 0:
			res := kmsg.NewIncrementalAlterConfigsResponseResource()
			res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
			res.ErrorCode, res.ErrorMessage = refused, &refusal
			local[i] = res
		default:
			local[i] = rs.alterGroupResource(rr, r.ValidateOnly)
		}
	}
	rest := func() kmsg.Request {
		fwd := *r
		fwd.Resources = upstream
		return &fwd
	}
	splitForward(req, out, len(local), len(upstream), rest, req.Version, func(ar *kmsg.IncrementalAlterConfigsResponse) *kmsg.IncrementalAlterConfigsResponse {
		byLocal := answeredHere(owned, func(i int) kmsg.IncrementalAlterConfigsResponseResource { return local[i] })
		ar.Resources = mergeByPosition(len(r.Resources), byLocal, ar.Resources)
		return ar
	})
}

// altersGroupResource reports whether an IncrementalAlterConfigs resource is
// served locally: a GROUP resource of an owned group, or one that only sets
// streams.* configs (streams groups are served by the proxy, so their
// settings live here even before the group's first member joins).
func (rs *Routes) altersGroupResource(res kmsg.IncrementalAlterConfigsRequestResource) bool {
	if res.ResourceType != kmsg.ConfigResourceTypeGroupConfig {
		return false
	}
	if rs.o.Coordinator.Owns(res.ResourceName) {
		return true
	}
	for _, c := range res.Configs {
		if !streams.IsStreamsGroupConfig(c.Name) {
			return false
		}
	}
	return len(res.Configs) > 0
}

func (rs *Routes) alterGroupResource(rr kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) kmsg.IncrementalAlterConfigsResponseResource {
	res := kmsg.NewIncrementalAlterConfigsResponseResource()
	res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
	alts := make([]streams.GroupConfigAlteration, 0, len(rr.Configs))
	for _, c := range rr.Configs {
		alts = append(alts, streams.GroupConfigAlteration{Name: c.Name, Op: c.Op, Value: c.Value})
	}
	if err := rs.o.Coordinator.AlterGroupConfigs(rr.ResourceName, alts, validateOnly); err != nil {
		msg := err.Message
		res.ErrorCode, res.ErrorMessage = err.Err.Code, &msg
	}
	return res
}
