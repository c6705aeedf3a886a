package cluster

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/proxy/peer"
	"github.com/streamshift/streamshift/upstream"
)

// View is what /cluster shows, and what the status page reads of the
// cluster.
type View struct {
	Self       upstream.InstanceInfo            `json:"self"`
	Instances  map[string]upstream.InstanceInfo `json:"instances"`
	Owners     []string                         `json:"owners"`
	Partitions []coordinator.PartitionStatus    `json:"partitions"`
	Topic      string                           `json:"topic"`
	// Generation is the map's (a serve call routed by a newer map is
	// refused here).
	Generation int32 `json:"generation"`
	// Links are the links to the other instances, by proxy id: address,
	// up since when, calls in flight by kind, last error.
	Links map[string]peer.LinkStatus `json:"links,omitempty"`
}

// View is this instance, the latest map's instances and owners, this
// instance's partitions with their load state, and its links.
func (cr *Runtime) View() View {
	v := View{Self: cr.self, Partitions: cr.parts.Status(), Topic: cr.log.Topic()}
	if g := cr.group.Load(); g != nil {
		m := g.Map()
		v.Instances, v.Owners, v.Generation = m.Instances, m.Owners, m.Generation
	}
	v.Links = cr.links.links.Status()
	return v
}

// PartitionCount is the group log's partition count.
func (cr *Runtime) PartitionCount() int32 { return cr.log.Partitions() }

// PartitionOf is the group log partition of group.
func (cr *Runtime) PartitionOf(group string) int32 { return cr.parts.Of(group) }

// ServeHTTP is /cluster: the instances, every partition's owner, and this
// instance's partitions with their load state.
func (cr *Runtime) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(cr.View()); err != nil {
		http.Error(w, fmt.Sprint(err), http.StatusInternalServerError)
	}
}
