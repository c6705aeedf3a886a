package coordinator

import "github.com/streamshift/streamshift/coordinator/topology"

// defaultConfigure is Kafka 4.4's topic configuration.
var defaultConfigure configureFunc = topology.Configure
