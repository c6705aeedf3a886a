package streams

import (
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// Heartbeat status codes (StreamsGroupHeartbeatResponse.Status.StatusCode).
const (
	StatusStaleTopology                int8 = 0
	StatusMissingSourceTopics          int8 = 1
	StatusIncorrectlyPartitionedTopics int8 = 2
	StatusMissingInternalTopics        int8 = 3
	StatusShutdownApplication          int8 = 4
	StatusAssignmentDelayed            int8 = 5
	StatusMissingClientTags            int8 = 6
)

// ConfigureFunc configures a topology against partition counts
// (topology.Configure; tests may substitute it).
type ConfigureFunc func(t topology.Topology, partitions topology.PartitionCounts) topology.ConfiguredTopology

// configuredTopology is the outcome of configuring the group's topology. It
// is kept in memory only and recomputed after a failover or a metadata change.
type configuredTopology struct {
	topology.ConfiguredTopology
}

func (c *configuredTopology) IsReady() bool { return c != nil && c.Ready() }

// Status is the heartbeat status of a topology that is not ready (-1 when
// ready or when the configuration failed the heartbeat instead).
func (c *configuredTopology) Status() int8 {
	if c.Err == nil || !c.Err.IsStatus() {
		return -1
	}
	return c.Err.Status
}

// failure is the error a configuration fails the heartbeat with, or nil.
func (c *configuredTopology) failure() *CoordError { return topologyFailure(c.Err) }

// topologyFailure converts a topology error that fails the heartbeat (not a
// status) to the error answered, or returns nil.
func topologyFailure(e *topology.Error) *CoordError {
	if e == nil || e.IsStatus() {
		return nil
	}
	var ke *kerr.Error
	if !errors.As(kerr.ErrorForCode(e.ErrorCode), &ke) {
		ke = kerr.UnknownServerError
	}
	return &CoordError{Code: ke, Msg: e.Message}
}

func (c *configuredTopology) SubtopologyByID(id string) *topology.ConfiguredSubtopology {
	s, ok := c.Subtopology(id)
	if !ok {
		return nil
	}
	return &s
}

// requiredTopics are the topics whose metadata the configuration reads: the
// metadata hash covers them.
func requiredTopics(t *topology.Topology) []string {
	var out []string
	for _, s := range t.Subtopologies {
		out = append(out, s.SourceTopics...)
		for _, r := range s.RepartitionSourceTopics {
			out = append(out, r.Name)
		}
		for _, c := range s.StateChangelogTopics {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// DefaultConfigure is Kafka 4.4's topic configuration.
var DefaultConfigure ConfigureFunc = topology.Configure
