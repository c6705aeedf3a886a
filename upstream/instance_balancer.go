package upstream

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The instance group's wire: streamshift's own balancer on the classic group
// protocol (protocol type "consumer", so every broker from 2.8 on serves
// it). Brokers and tools read a "consumer" group's metadata and
// assignments as Kafka's ConsumerProtocol (a 3.9 broker never completes a
// join whose metadata is not one), so both are ConsumerProtocol messages
// naming the log topic's partitions, and streamshift's own data rides in
// their user data: each member's InstanceInfo, and for every member the
// whole partition → instance map (ClusterMap) with its own partitions.
// Both are versioned JSON: readers ignore unknown fields, so instances of
// two releases share a cluster.

// InstanceProtocol is the instance group's protocol name.
const InstanceProtocol = "streamshift-instances"

// instanceFormatVersion is the version of InstanceInfo and ClusterMap.
const instanceFormatVersion = 1

// InstanceInfo is one instance as the others see it.
type InstanceInfo struct {
	V int `json:"v"`
	// ProxyID is the instance's proxy-id, unique in the cluster.
	ProxyID string `json:"proxy_id"`
	// Host is the instance's advertised host, unique in the cluster: the
	// owner's FindCoordinator answer.
	Host string `json:"host"`
	// Internal is the address of the instance's internal listener
	// (cluster.advertised-address), where the other instances' links
	// connect; empty for a release without one.
	Internal string `json:"internal,omitempty"`
	// Version is the instance's streamshift release (informational).
	Version string `json:"version,omitempty"`
	// Owned are the log partitions the instance holds now, which the
	// leader keeps with it where the spread allows (sticky).
	Owned []int32 `json:"owned,omitempty"`
	// Generation is the instance group generation Owned is of; of two
	// members claiming one partition, the newer generation keeps it.
	Generation int32 `json:"generation"`
	// Served is the highest version of each Kafka API key the instance
	// intercepts (proxy.ServedVersions); nil from a release without it.
	Served map[int16]int16 `json:"served,omitempty"`
}

// ClusterMap is what every instance knows of the cluster after a rebalance.
type ClusterMap struct {
	V int `json:"v"`
	// Owners[p] is the proxy id owning log partition p; "" while it moves
	// (its previous owner gives it up first, then the next rebalance hands
	// it on: the cooperative protocol).
	Owners []string `json:"owners"`
	// Instances are the members, by proxy id, without their Owned.
	Instances map[string]InstanceInfo `json:"instances"`
	// Error, set for a member that must not serve (a duplicate proxy id or
	// advertised host): it stops with this error.
	Error string `json:"error,omitempty"`
	// Mine are the receiver's partitions.
	Mine []int32 `json:"mine"`
	// Generation orders maps: one more than the newest generation a
	// member's partitions were of, so each rebalance's map is newer than
	// the last (a serve call routed by a newer map than the owner's is
	// refused: the owner missed a rebalance, docs/one-address.md §6).
	Generation int32 `json:"generation,omitempty"`
}

// Owner returns the instance owning partition p, if any.
func (m ClusterMap) Owner(p int32) (InstanceInfo, bool) {
	if p < 0 || int(p) >= len(m.Owners) || m.Owners[p] == "" {
		return InstanceInfo{}, false
	}
	in, ok := m.Instances[m.Owners[p]]
	return in, ok
}

// ServedVersions is, for each key an instance of m intercepts, the lowest
// of those instances' highest versions: what every instance advertises to
// its clients at most, since a request it intercepts may be carried to an
// owner of another release, which must decode it (docs/one-address.md §4,
// "Mixed releases"). An instance that does not intercept a key (another
// release, or the migration off) does not bound it: a bound could only
// take the key from every client.
func (m ClusterMap) ServedVersions() map[int16]int16 {
	out := map[int16]int16{}
	for _, in := range m.Instances {
		for k, v := range in.Served {
			if cur, ok := out[k]; !ok || v < cur {
				out[k] = v
			}
		}
	}
	return out
}

// instanceMember is one member of a balance: its member id and metadata.
type instanceMember struct {
	memberID string
	info     InstanceInfo
}

// balanceInstances spreads partitions over members evenly (counts differ
// by at most one), keeps every partition with its current owner where the
// spread allows, and hands a partition that moves to its next owner only
// once its current owner gave it up (cooperative: it stays unassigned in
// this round). Members sharing a proxy id or advertised host with an
// earlier one (the one holding more partitions, then the lower member id)
// get an error instead of partitions. The result is by member id.
func balanceInstances(members []instanceMember, partitions int32) map[string]ClusterMap {
	sort.Slice(members, func(i, j int) bool {
		a, b := members[i], members[j]
		if len(a.info.Owned) != len(b.info.Owned) {
			return len(a.info.Owned) > len(b.info.Owned)
		}
		return a.memberID < b.memberID
	})
	out := make(map[string]ClusterMap, len(members))
	instances := map[string]InstanceInfo{}
	byID, byHost, byTag, byInternal := map[string]string{}, map[string]string{}, map[int32]string{}, map[string]string{}
	// Once every member has an internal address, requests hop to their
	// owner over the links: the instances may share one advertised host
	// (a load balancer's) and name no node ids of their own, but each
	// must be reachable at its own internal address. A member without
	// one (an earlier release) keeps the earlier rules for all.
	hops := true
	for _, m := range members {
		hops = hops && m.info.Internal != ""
	}
	var live []instanceMember
	for _, m := range members {
		tag := instanceTag(m.info.ProxyID)
		if prev, ok := byID[m.info.ProxyID]; ok {
			out[m.memberID] = ClusterMap{V: instanceFormatVersion, Error: fmt.Sprintf("proxy-id %q is used by another streamshift instance of this cluster (advertised host %s): proxy ids must be unique", m.info.ProxyID, instances[prev].Host)}
			continue
		}
		if prev, ok := byInternal[m.info.Internal]; ok && hops {
			out[m.memberID] = ClusterMap{V: instanceFormatVersion, Error: fmt.Sprintf("cluster.advertised-address %q is used by streamshift instance %q of this cluster too: each instance must be reachable at its own internal address", m.info.Internal, prev)}
			continue
		}
		if prev, ok := byHost[m.info.Host]; ok && !hops {
			out[m.memberID] = ClusterMap{V: instanceFormatVersion, Error: fmt.Sprintf("advertised host %q is used by streamshift instance %q of this cluster too: advertised hosts must be unique (each instance is the coordinator of its groups at its own host)", m.info.Host, prev)}
			continue
		}
		if prev, ok := byTag[tag]; ok && prev != m.info.ProxyID && !hops {
			out[m.memberID] = ClusterMap{V: instanceFormatVersion, Error: fmt.Sprintf("proxy-id %q names the same coordinator node ids as instance %q (a hash collision): choose another proxy-id", m.info.ProxyID, prev)}
			continue
		}
		byID[m.info.ProxyID], byHost[m.info.Host], byTag[tag], byInternal[m.info.Internal] = m.info.ProxyID, m.info.ProxyID, m.info.ProxyID, m.info.ProxyID
		info := m.info
		info.Owned = nil
		instances[m.info.ProxyID] = info
		live = append(live, m)
	}
	owners := make([]string, partitions)
	if len(live) == 0 {
		return out
	}
	// Current owners; of two claims (a zombie's and its successor's) the
	// newer generation wins.
	claimGen := make([]int32, partitions)
	gen := int32(1)
	for _, m := range live {
		gen = max(gen, m.info.Generation+1)
		for _, p := range m.info.Owned {
			if p < 0 || p >= partitions {
				continue
			}
			if owners[p] == "" || m.info.Generation > claimGen[p] {
				owners[p], claimGen[p] = m.info.ProxyID, m.info.Generation
			}
		}
	}
	// Quotas: the members holding most get the extra partitions first.
	quota := map[string]int{}
	base, extra := int(partitions)/len(live), int(partitions)%len(live)
	for i, m := range live {
		quota[m.info.ProxyID] = base
		if i < extra {
			quota[m.info.ProxyID]++
		}
	}
	held := map[string]int{}
	target := make([]string, partitions)
	moving := make([]bool, partitions)
	for p := int32(0); p < partitions; p++ {
		if o := owners[p]; o != "" && held[o] < quota[o] {
			target[p] = o
			held[o]++
		} else if o != "" {
			moving[p] = true // its owner gives it up first
		}
	}
	for p := int32(0); p < partitions; p++ {
		if target[p] != "" || moving[p] {
			continue
		}
		for _, m := range live {
			if id := m.info.ProxyID; held[id] < quota[id] {
				target[p] = id
				held[id]++
				break
			}
		}
	}
	mine := map[string][]int32{}
	for p, id := range target {
		if id != "" {
			mine[id] = append(mine[id], int32(p))
		}
	}
	for _, m := range live {
		ps := mine[m.info.ProxyID]
		if ps == nil {
			ps = []int32{}
		}
		out[m.memberID] = ClusterMap{V: instanceFormatVersion, Owners: target, Instances: instances, Mine: ps, Generation: gen}
	}
	return out
}

// instanceBalancer is the kgo GroupBalancer of the instance group.
type instanceBalancer struct {
	topic      string
	partitions int32
	self       InstanceInfo
	// onMap gets every map this member is assigned, before kgo applies
	// the member's partitions (ParseSyncAssignment).
	onMap func(ClusterMap)
}

func (b *instanceBalancer) ProtocolName() string { return InstanceProtocol }
func (b *instanceBalancer) IsCooperative() bool  { return true }

func (b *instanceBalancer) JoinGroupMetadata(_ []string, current map[string][]int32, generation int32) []byte {
	info := b.self
	info.V = instanceFormatVersion
	info.Owned = append([]int32(nil), current[b.topic]...)
	info.Generation = generation
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Version = 1
	meta.Topics = []string{b.topic}
	meta.UserData, _ = json.Marshal(info) // plain fields: cannot fail
	if len(info.Owned) > 0 {
		meta.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: b.topic, Partitions: info.Owned}}
	}
	return meta.AppendTo(nil)
}

func (b *instanceBalancer) ParseSyncAssignment(assignment []byte) (map[string][]int32, error) {
	var ca kmsg.ConsumerMemberAssignment
	if err := ca.ReadFrom(assignment); err != nil {
		return nil, fmt.Errorf("instance group assignment: %w", err)
	}
	var m ClusterMap
	if err := json.Unmarshal(ca.UserData, &m); err != nil {
		return nil, fmt.Errorf("instance group assignment: %w", err)
	}
	if b.onMap != nil {
		b.onMap(m)
	}
	if m.Error != "" {
		return map[string][]int32{}, nil
	}
	return map[string][]int32{b.topic: m.Mine}, nil
}

func (b *instanceBalancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	ms := make([]instanceMember, 0, len(members))
	var bad []string
	for _, m := range members {
		var meta kmsg.ConsumerMemberMetadata
		var info InstanceInfo
		if err := meta.ReadFrom(m.ProtocolMetadata); err != nil || json.Unmarshal(meta.UserData, &info) != nil || info.ProxyID == "" {
			bad = append(bad, m.MemberID)
			continue
		}
		ms = append(ms, instanceMember{memberID: m.MemberID, info: info})
	}
	if len(bad) > 0 {
		return nil, nil, fmt.Errorf("instance group members without streamshift metadata: %s", strings.Join(bad, ", "))
	}
	return &instancePlan{topic: b.topic, members: ms, partitions: b.partitions}, map[string]struct{}{b.topic: {}}, nil
}

// instancePlan balances one rebalance.
type instancePlan struct {
	topic      string
	members    []instanceMember
	partitions int32
}

func (p *instancePlan) Balance(map[string]int32) kgo.IntoSyncAssignment {
	// The partition count is the configured one: the topic was checked
	// against it at open, and kgo's metadata may lag.
	return syncAssignment{topic: p.topic, maps: balanceInstances(p.members, p.partitions)}
}

// syncAssignment is a balance's result by member id, for topic.
type syncAssignment struct {
	topic string
	maps  map[string]ClusterMap
}

func (s syncAssignment) IntoSyncAssignment() []kmsg.SyncGroupRequestGroupAssignment {
	ids := make([]string, 0, len(s.maps))
	for id := range s.maps {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]kmsg.SyncGroupRequestGroupAssignment, 0, len(ids))
	for _, id := range ids {
		ca := kmsg.NewConsumerMemberAssignment()
		ca.Version = 1
		if m := s.maps[id]; len(m.Mine) > 0 {
			ca.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: s.topic, Partitions: m.Mine}}
		}
		ca.UserData, _ = json.Marshal(s.maps[id])
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = id, ca.AppendTo(nil)
		out = append(out, a)
	}
	return out
}

// InstanceNodeID is the node id FindCoordinator names for a group owned by
// instance proxyID whose upstream coordinator is node: Java clients key
// connections by node id, and a producer already connected to node through
// another instance would send the group's TxnOffsetCommit there, so each
// instance's coordinators get ids of their own, the same on every instance
// and for the instance's life: 2^30 + tag(proxy id)·2^16 + node, with a
// 14-bit tag (FNV-1a of the proxy id; the balancer refuses two instances
// with one tag). The proxy serves a connection by the port it arrived on,
// so the id is a label only.
func InstanceNodeID(proxyID string, node int32) int32 {
	return 1<<30 | instanceTag(proxyID)<<16 | node&0xffff
}

func instanceTag(proxyID string) int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(proxyID))
	return int32(h.Sum32() & 0x3fff)
}
