package streams

import (
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// HeartbeatError builds the response of a failed heartbeat.
func HeartbeatError(req *kmsg.StreamsGroupHeartbeatRequest, err *CoordError) *kmsg.StreamsGroupHeartbeatResponse {
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.Version = req.Version
	resp.ErrorCode = err.Code.Code
	msg := err.Msg
	resp.ErrorMessage = &msg
	return resp
}

// ValidateHeartbeat is the request validation of Kafka's broker gate and
// GroupCoordinatorService; it returns the error response, or nil.
func ValidateHeartbeat(req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	if err := checkHeartbeat(req); err != nil {
		return HeartbeatError(req, err)
	}
	return nil
}

func checkHeartbeat(req *kmsg.StreamsGroupHeartbeatRequest) *CoordError {
	// The broker gate and the service check the topology itself first:
	// internal or invalid topic names, regexes, changelog partitions.
	if req.Topology != nil {
		if err := topology.Validate(TopologyFromRequest(req.Topology)); err != nil {
			var te *topology.Error
			if errors.As(err, &te) {
				if ce := topologyFailure(te); ce != nil {
					return ce
				}
			}
			return Errorf(kerr.StreamsInvalidTopology, "%v", err)
		}
	}
	invalid := func(format string, args ...any) *CoordError {
		return Errorf(kerr.InvalidRequest, format, args...)
	}
	if strings.TrimSpace(req.MemberID) == "" {
		return invalid("MemberId can't be empty.")
	}
	if strings.TrimSpace(req.Group) == "" {
		return invalid("GroupId can't be empty.")
	}
	if req.InstanceID != nil && strings.TrimSpace(*req.InstanceID) == "" {
		return invalid("InstanceId can't be empty.")
	}
	if req.RackID != nil && strings.TrimSpace(*req.RackID) == "" {
		return invalid("RackId can't be empty.")
	}
	nulls := 0
	for _, l := range [3][]kmsg.TaskIDs{req.ActiveTasks, req.StandbyTasks, req.WarmupTasks} {
		if l == nil {
			nulls++
		}
	}
	switch {
	case req.MemberEpoch == 0:
		if req.RebalanceTimeoutMillis == -1 {
			return invalid("RebalanceTimeoutMs must be provided when joining.")
		}
		if nulls > 0 || len(req.ActiveTasks) > 0 || len(req.StandbyTasks) > 0 || len(req.WarmupTasks) > 0 {
			return invalid("ActiveTasks, StandbyTasks and WarmupTasks must be empty when (re-)joining.")
		}
		if req.Topology == nil {
			return invalid("Topology must be non-null when (re-)joining.")
		}
	case req.MemberEpoch == leaveGroupStaticMemberEpoch:
		if req.InstanceID == nil {
			return invalid("InstanceId can't be null.")
		}
	case req.MemberEpoch < leaveGroupStaticMemberEpoch:
		return invalid("MemberEpoch is %d, but must be greater than or equal to -2.", req.MemberEpoch)
	}
	if req.MemberEpoch != 0 {
		if nulls != 0 && nulls != 3 {
			return invalid("If one task-type is non-null, all must be non-null.")
		}
		if req.Topology != nil {
			return invalid("Topology can only be provided when (re-)joining.")
		}
	}
	// What Kafka would fail to write (record_bounds.go), once the request
	// is otherwise valid, as Kafka finds it only then.
	return checkRecordBounds(req)
}
