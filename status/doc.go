// Package status is what the admin listener shows of the served groups: the
// status page (/ui), its JSON (/api/groups, /api/groups/{id}) and the group
// metrics on /metrics.
//
// Everything it reports of a group is read through the coordinator's own
// read-only entry points (ListGroups, StreamsGroupDescribe), which run on
// the group's executor like any other request: the status page never reads
// the coordinator's state from another goroutine. What only the migration
// knows (its phase, when it started, how long it took) comes from the
// migration's and the coordinator's event hooks (Events), the same hooks
// the capture hears.
package status
