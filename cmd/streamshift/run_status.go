package main

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/capture"
	"github.com/streamshift/streamshift/cluster"
	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/migration"
	"github.com/streamshift/streamshift/status"
)

// groupEvents hands the coordinator's and the migration's events to each of
// their hearers: the capture and the status page's metrics and phases.
type groupEvents []interface {
	coordinator.Events
	migration.Events
}

func (g groupEvents) GroupEvent(e coordinator.GroupEvent) {
	for _, h := range g {
		h.GroupEvent(e)
	}
}

func (g groupEvents) MigrationEvent(e migration.MigrationEvent) {
	for _, h := range g {
		h.MigrationEvent(e)
	}
}

// The hearers that time the coordinator's steps (coordinator.Timings).
func (g groupEvents) HeartbeatHandled(d time.Duration) {
	for _, h := range g {
		if t, ok := h.(coordinator.Timings); ok {
			t.HeartbeatHandled(d)
		}
	}
}

func (g groupEvents) LogAppended(d time.Duration, err error) {
	for _, h := range g {
		if t, ok := h.(coordinator.Timings); ok {
			t.LogAppended(d, err)
		}
	}
}

func (g groupEvents) TopicsCreated(created, failed int) {
	for _, h := range g {
		if t, ok := h.(coordinator.Timings); ok {
			t.TopicsCreated(created, failed)
		}
	}
}

// flightRecorders lists the groups with a flight recorder, for the status
// page's links.
func flightRecorders(r *capture.Recorder) func() []string {
	return func() []string {
		var out []string
		for _, f := range r.Status().Flight {
			out = append(out, f.Group)
		}
		return out
	}
}

// adminWithStatus adds the status page and its JSON (/ui, /api/...) to the
// admin endpoints; srv is set once the coordinator exists (503 before).
func adminWithStatus(admin http.Handler, srv func() *status.Server) http.Handler {
	mux := http.NewServeMux()
	st := func(w http.ResponseWriter, req *http.Request) {
		s := srv()
		if s == nil {
			http.Error(w, "the streams-group coordinator is starting", http.StatusServiceUnavailable)
			return
		}
		s.Handler().ServeHTTP(w, req)
	}
	mux.HandleFunc("/ui", st)
	mux.HandleFunc("/api/", st)
	// The root is where a person opening the admin URL lands: the status
	// page, not a 404.
	mux.Handle("/{$}", http.RedirectHandler("/ui", http.StatusFound))
	mux.Handle("/", admin)
	return mux
}

// statusCluster is the status page's view of the cluster runtime: the
// instances and owners of its last instance-group rebalance, this
// instance's partition load states.
type statusCluster struct {
	cr *cluster.Runtime
	// leaving is set once this instance hands its partitions over (it
	// stops).
	leaving atomic.Bool
}

func (s *statusCluster) View() status.ClusterView {
	v := s.cr.View()
	local := map[int32]string{}
	for _, p := range v.Partitions {
		local[p.Partition] = p.State
	}
	owners := make([]string, s.cr.PartitionCount())
	copy(owners, v.Owners)
	instances := map[string]status.Instance{}
	for id, in := range v.Instances {
		instances[id] = status.Instance{Host: in.Host, Version: in.Version}
	}
	self := status.Instance{ProxyID: v.Self.ProxyID, Host: v.Self.Host, Version: v.Self.Version}
	return status.NewClusterView(v.Topic, self, s.leaving.Load(), instances, owners, local)
}

func (s *statusCluster) PartitionOf(group string) int32 { return s.cr.PartitionOf(group) }

// changelogEndOffsets reads end offsets with the control-plane client, for
// the status page's lag of members that report none (classic members).
func changelogEndOffsets(cl *kgo.Client) status.EndOffsets {
	adm := kadm.NewClient(cl)
	return func(ctx context.Context, topics []string) (map[string]map[int32]int64, error) {
		listed, err := adm.ListEndOffsets(ctx, topics...)
		if err != nil {
			return nil, fmt.Errorf("list end offsets of %v: %w", topics, err)
		}
		out := map[string]map[int32]int64{}
		listed.Each(func(o kadm.ListedOffset) {
			if o.Err != nil {
				return
			}
			if out[o.Topic] == nil {
				out[o.Topic] = map[int32]int64{}
			}
			out[o.Topic][o.Partition] = o.Offset
		})
		return out, nil
	}
}

// statusUpstream is the status page's read of the upstream with the
// control-plane client: the observed classic groups' descriptions and the
// groups' committed offsets, for measured lags.
type statusUpstream struct{ cl *kgo.Client }

func (u statusUpstream) DescribeClassic(ctx context.Context, ids []string) ([]kmsg.DescribeGroupsResponseGroup, error) {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = ids
	// The client sends each group to its coordinator and merges the answers.
	resp, err := req.RequestWith(ctx, u.cl)
	if err != nil {
		return nil, fmt.Errorf("describe groups %v: %w", ids, err)
	}
	return resp.Groups, nil
}

func (u statusUpstream) Committed(ctx context.Context, group string) (map[string]map[int32]int64, error) {
	fetched, err := kadm.NewClient(u.cl).FetchOffsets(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("committed offsets of %s: %w", group, err)
	}
	out := map[string]map[int32]int64{}
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			return
		}
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		out[o.Topic][o.Partition] = o.At
	})
	return out, nil
}
