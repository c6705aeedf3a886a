package streams

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

// computeTargetAssignment runs the assignor over all members at the group
// epoch (Kafka's TargetAssignmentBuilder): it writes the target of every
// member whose target changed, then the assignment metadata. A topology that
// is not ready gives every member an empty target, and so does a hand-back
// barrier (handBackBarrierUp): its members revoke everything before they
// leave for the upstream group.
func (ch *Change) computeTargetAssignment() error {
	g := ch.Group
	configured := g.Mem.configured
	ids := make([]string, 0, len(g.Members))
	for id := range g.Members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	targets := make(map[string]TaskSets, len(ids))
	if configured.IsReady() && !handBackBarrierUp(g) {
		spec := assignor.GroupSpec{
			Members: make(map[string]assignor.MemberSpec, len(ids)),
			Configs: map[string]string{
				"num.standby.replicas":    strconv.Itoa(ch.Config.NumStandbyReplicas),
				"num.warmup.replicas":     strconv.Itoa(ch.Config.NumWarmupReplicas),
				"acceptable.recovery.lag": strconv.FormatInt(ch.Config.AcceptableRecoveryLag, 10),
			},
		}
		if tags := ch.Config.RackAwareAssignmentTags; len(tags) > 0 {
			spec.Configs[assignor.ConfigRackAwareAssignmentTags] = strings.Join(tags, ",")
		}
		for _, id := range ids {
			spec.Members[id] = memberSpec(g.Members[id])
		}
		start := ch.Wall()
		ga, err := ch.Assignor.Assign(spec, configured.ConfiguredTopology)
		if err != nil {
			err = fmt.Errorf("assignor %s: %w", ch.Assignor.Name(), err)
			ch.logAt(LevelError).Err(err).Int32("epoch", g.GroupEpoch).
				Msgf("[GroupId %s] Failed to compute a new target assignment for epoch %d: %v.", g.ID, g.GroupEpoch, err)
			return err
		}
		took := ch.Wall().Sub(start)
		ch.logAt(LevelInfo).Ev(EventTargetAssignment).Int32("epoch", g.GroupEpoch).Dur("took", took).
			Msgf("[GroupId %s] Computed a new target assignment for epoch %d with '%s' assignor in %dms.", g.ID, g.GroupEpoch, ch.Assignor.Name(), took.Milliseconds())
		for _, id := range ids {
			a := ga.Members[id]
			targets[id] = TaskSets{Active: NormalizeTasks(a.ActiveTasks), Standby: NormalizeTasks(a.StandbyTasks), Warmup: NormalizeTasks(a.WarmupTasks)}
		}
		refineWarmups(g, configured, targets, ch.Config.NumWarmupReplicas, ch.Config.AcceptableRecoveryLag)
	}
	for _, id := range ids {
		t := targets[id]
		if old, ok := g.Target[id]; ok && old.Equal(t) {
			continue
		}
		ch.emit(newTargetAssignmentRecord(g.ID, id, t))
	}
	ch.emit(newTargetAssignmentEpochRecord(g.ID, g.GroupEpoch, ch.Now.UnixMilli()))
	return nil
}

// memberSpec is what the assignor sees of a member. Kafka 4.4 passes the
// current assignment as the previous one (≤4.3 passed the previous target).
func memberSpec(m *Member) assignor.MemberSpec {
	spec := assignor.MemberSpec{}
	if m.Meta != nil {
		spec.InstanceID = m.Meta.InstanceID
		spec.RackID = m.Meta.RackID
		spec.ProcessID = m.Meta.ProcessID
		if len(m.Meta.ClientTags) > 0 {
			spec.ClientTags = make(map[string]string, len(m.Meta.ClientTags))
			for _, kv := range m.Meta.ClientTags {
				spec.ClientTags[kv.Key] = kv.Value
			}
		}
	}
	cur := m.CurrentAssignment()
	spec.ActiveTasks = cur.Assigned.Active
	spec.StandbyTasks = cur.Assigned.Standby
	spec.WarmupTasks = cur.Assigned.Warmup
	if len(m.TaskOffsets) > 0 {
		spec.TaskOffsets = map[string]map[int32]int64{}
		for _, o := range m.TaskOffsets {
			if spec.TaskOffsets[o.SubtopologyID] == nil {
				spec.TaskOffsets[o.SubtopologyID] = map[int32]int64{}
			}
			spec.TaskOffsets[o.SubtopologyID][o.Partition] = o.Offset
		}
	}
	return spec
}
