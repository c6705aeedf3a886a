package status

import "sort"

// Cluster is what the status page reads of the instances sharing the
// durable group log (package cluster's runtime, which cmd/streamshift's
// statusCluster adapts: status imports no cluster); nil without the
// durable log, where one instance serves every group.
type Cluster interface {
	// View is the instances and the owners of the group-log partitions as
	// this instance knows them now (its last instance-group rebalance).
	View() ClusterView
	// PartitionOf is the group-log partition of group, whose owner serves
	// the group.
	PartitionOf(group string) int32
}

// ClusterView is the cluster part of the status page and of /cluster.
type ClusterView struct {
	// Topic is the group log's topic.
	Topic string `json:"topic"`
	// Self is this instance's proxy id.
	Self      string     `json:"self"`
	Instances []Instance `json:"instances"`
	// Partitions are all the group log's partitions, by number.
	Partitions []LogPartition `json:"partitions"`
}

// Instance is one streamshift instance of the cluster.
type Instance struct {
	ProxyID string `json:"proxyId"`
	// Host is the advertised host: the FindCoordinator answer for the
	// groups it owns.
	Host    string `json:"host"`
	Version string `json:"version,omitempty"`
	Self    bool   `json:"self"`
	// State is alive (a member of the last instance-group rebalance),
	// leaving (this instance, handing its partitions over as it stops) or
	// joining (this instance, before its first rebalance).
	State string `json:"state"`
	// Owned are the group-log partitions the instance owns.
	Owned []int32 `json:"owned"`
}

// LogPartition is one group-log partition and its owner.
type LogPartition struct {
	Partition int32 `json:"partition"`
	// Owner is the owning instance's proxy id; "" while the partition
	// moves (its previous owner gave it up, the next rebalance hands it on).
	Owner string `json:"owner"`
	// Local is this instance's state of a partition it holds (loading,
	// loaded); "" for the others'.
	Local string `json:"local,omitempty"`
}

// Instance states.
const (
	InstanceAlive   = "alive"
	InstanceLeaving = "leaving"
	InstanceJoining = "joining"
)

// NewClusterView builds the view from the owner map (owners[p] is the
// proxy id owning partition p, "" while it moves), the instances by proxy
// id (their Host and Version), and this instance's local partition states;
// each instance's Owned is derived from owners, the instances sorted by
// proxy id. This instance is listed as joining while the map lacks it.
func NewClusterView(topic string, self Instance, leaving bool, instances map[string]Instance, owners []string, local map[int32]string) ClusterView {
	v := ClusterView{Topic: topic, Self: self.ProxyID, Instances: []Instance{}, Partitions: []LogPartition{}}
	owned := map[string][]int32{}
	for p, o := range owners {
		v.Partitions = append(v.Partitions, LogPartition{Partition: int32(p), Owner: o, Local: local[int32(p)]})
		if o != "" {
			owned[o] = append(owned[o], int32(p))
		}
	}
	for id, in := range instances {
		in.ProxyID = id
		in.Self = id == self.ProxyID
		in.State = InstanceAlive
		if in.Self && leaving {
			in.State = InstanceLeaving
		}
		in.Owned = owned[id]
		if in.Owned == nil {
			in.Owned = []int32{}
		}
		v.Instances = append(v.Instances, in)
	}
	if _, ok := instances[self.ProxyID]; !ok {
		self.Self, self.State, self.Owned = true, InstanceJoining, []int32{}
		if leaving {
			self.State = InstanceLeaving
		}
		v.Instances = append(v.Instances, self)
	}
	sort.Slice(v.Instances, func(i, j int) bool { return v.Instances[i].ProxyID < v.Instances[j].ProxyID })
	return v
}

// Owner is the instance owning partition p, if the view knows one.
func (v ClusterView) Owner(p int32) (Instance, bool) {
	if p < 0 || int(p) >= len(v.Partitions) || v.Partitions[p].Owner == "" {
		return Instance{}, false
	}
	for _, in := range v.Instances {
		if in.ProxyID == v.Partitions[p].Owner {
			return in, true
		}
	}
	// Owned by an instance the map no longer lists: its proxy id only.
	return Instance{ProxyID: v.Partitions[p].Owner}, true
}

// GroupOwner is where a group is served in the cluster: its group-log
// partition and that partition's owner.
type GroupOwner struct {
	Partition int32 `json:"partition"`
	// Owner is the owner's proxy id, "" while the partition moves.
	Owner string `json:"owner"`
	// Host is the owner's advertised host.
	Host string `json:"host,omitempty"`
	// Self: this instance owns it.
	Self bool `json:"self"`
}

// groupOwner places group in the view.
func (v ClusterView) groupOwner(c Cluster, group string) *GroupOwner {
	p := c.PartitionOf(group)
	g := &GroupOwner{Partition: p}
	if in, ok := v.Owner(p); ok {
		g.Owner, g.Host, g.Self = in.ProxyID, in.Host, in.ProxyID == v.Self
	}
	return g
}
