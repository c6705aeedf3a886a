package main

import "github.com/rs/zerolog"

// Keys whose presence dates the upstream's release: the oldest release
// streamshift is tested with is Kafka 2.8 (README, "Supported versions").
const (
	keyDescribeCluster       = 60 // KIP-700, Kafka 2.8
	keyStreamsGroupHeartbeat = 88 // KIP-1071, Kafka 4.1 (early access), 4.2+
)

// checkUpstreamRelease says at start where the upstream stands against the
// tested range, so a broker outside it is never served silently: older than
// 2.8 is a warning (untested, not refused: what streamshift needs exists from
// 2.4, static membership and batched LeaveGroup, but nothing older was run);
// a broker with native streams groups is told streamshift serves them itself.
// versions is the upstream's ApiVersions (key → max version); empty when the
// upstream did not answer, which says nothing.
func checkUpstreamRelease(versions map[int16]int16, log zerolog.Logger) (tested bool) {
	if len(versions) == 0 {
		return false
	}
	if _, ok := versions[keyDescribeCluster]; !ok {
		log.Warn().Msg("the upstream broker is older than Apache Kafka 2.8 (it has no DescribeCluster, KIP-700): " +
			"streamshift is tested with brokers 2.8 to 4.4; older ones may work but nothing proves it")
		return false
	}
	if _, ok := versions[keyStreamsGroupHeartbeat]; ok {
		log.Info().Msg("the upstream broker serves streams groups itself (Kafka 4.1+): " +
			"streamshift still serves every streams group that reaches it, the broker serves none of them")
	}
	return true
}
