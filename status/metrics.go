package status

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamshift/streamshift/internal/kafkautf8"
)

// maxEpochGroups bounds streamshift_group_epoch's group label: the first
// groups by id get a series, the others none (their count is still in
// streamshift_groups). Every other group metric has no group label.
const maxEpochGroups = 100

// scrapeTimeout bounds the coordinator reads of one scrape.
const scrapeTimeout = 2 * time.Second

// Metrics are the group metrics. The gauges (groups by state, members by
// protocol, group epoch) are read from the coordinator at scrape time, like
// the page; the counters and histograms are fed by the events (Events).
// Labels are bounded: states, protocols, migration kinds and outcomes are
// fixed sets; rebalance causes and fencing reasons are the coordinator's
// fixed phrases (Kafka's); the group label only on streamshift_group_epoch,
// for at most maxEpochGroups groups.
type Metrics struct {
	coord Coordinator
	ev    *Events

	groups, members, epoch *prometheus.Desc

	rebalances    *prometheus.CounterVec
	fencings      *prometheus.CounterVec
	assignment    prometheus.Histogram
	heartbeat     prometheus.Histogram
	logAppend     *prometheus.HistogramVec
	topics        *prometheus.CounterVec
	migrations    *prometheus.CounterVec
	migrationsRun *prometheus.GaugeVec
	migrationDur  *prometheus.HistogramVec
	// migrationSettle: a takeover or hand-back from its start until every
	// task runs again (issue #39); migrationDur stays the state flip.
	migrationSettle *prometheus.HistogramVec
}

// NewMetrics registers the group metrics on reg. Bind the coordinator with
// Bind once it exists (the scrape-time gauges are empty until then).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		groups:  prometheus.NewDesc("streamshift_groups", "Streams groups served by this instance, by state.", []string{"state"}, nil),
		members: prometheus.NewDesc("streamshift_group_members", "Members of the served streams groups, by protocol (classic: a classic member served through translation).", []string{"protocol"}, nil),
		epoch:   prometheus.NewDesc("streamshift_group_epoch", "Group epoch of a served streams group (at most 100 groups, the first by id).", []string{"group"}, nil),
		rebalances: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamshift_group_rebalances_total",
			Help: "Group epoch bumps, by cause (one bump with several causes counts once for each)."}, []string{"cause"}),
		fencings: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamshift_group_fencings_total",
			Help: "Members fenced by the coordinator, by reason."}, []string{"reason"}),
		assignment: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "streamshift_group_target_assignment_seconds",
			Help: "Time to compute a target assignment.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 8)}),
		heartbeat: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "streamshift_streams_heartbeat_seconds",
			Help: "StreamsGroupHeartbeat handling time in the coordinator: queueing on the group's executor, the change and its group-log append.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 9)}),
		logAppend: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "streamshift_group_log_append_seconds",
			Help: "Group-log append time of a change's records, by result (ok, failed).", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 9)}, []string{"result"}),
		topics: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamshift_internal_topics_created_total",
			Help: "Internal (repartition and changelog) topics the coordinator asked the upstream to create, by result (created, failed)."}, []string{"result"}),
		migrations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamshift_migrations_total",
			Help: "Takeovers and hand-backs, by kind (takeover, hand-back) and outcome (started, done, failed)."}, []string{"kind", "outcome"}),
		migrationsRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "streamshift_migrations_running",
			Help: "Takeovers and hand-backs running now, by kind."}, []string{"kind"}),
		migrationDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "streamshift_migration_duration_seconds",
			Help: "Duration of the state flip of takeovers and hand-backs, from their start event to done or failed, by kind and outcome; how long the app's tasks moved is streamshift_migration_settle_seconds.", Buckets: prometheus.ExponentialBuckets(0.01, 3, 9)}, []string{"kind", "outcome"}),
		migrationSettle: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "streamshift_migration_settle_seconds",
			Help: "Takeovers and hand-backs from their first request until every task runs again, by kind: a takeover until its group is Stable here (every task running where the assignor put it), a hand-back (from the last streams member's leave) until every member of the broker's new classic generation has its assignment.", Buckets: prometheus.ExponentialBuckets(0.01, 3, 12)}, []string{"kind"}),
	}
	for _, r := range []string{"created", "failed"} {
		m.topics.WithLabelValues(r)
	}
	for _, k := range []string{"takeover", "hand-back"} {
		m.migrationsRun.WithLabelValues(k)
		for _, o := range []string{"started", "done", "failed"} {
			m.migrations.WithLabelValues(k, o)
		}
	}
	if reg != nil {
		reg.MustRegister(m, m.rebalances, m.fencings, m.assignment, m.heartbeat, m.logAppend, m.topics, m.migrations, m.migrationsRun, m.migrationDur, m.migrationSettle)
	}
	return m
}

// Bind sets the coordinator the gauges read and the events whose phases
// it prunes.
func (m *Metrics) Bind(c Coordinator, ev *Events) { m.coord, m.ev = c, ev }

func (m *Metrics) rebalance(cause string) { m.rebalances.WithLabelValues(cause).Inc() }
func (m *Metrics) fenced(reason string)   { m.fencings.WithLabelValues(reason).Inc() }

// migration counts a phase change; ended says a running phase of the same
// kind ended, took is how long it ran.
func (m *Metrics) migration(kind, state string, took time.Duration, ended bool) {
	if state == "running" {
		m.migrations.WithLabelValues(kind, "started").Inc()
		m.migrationsRun.WithLabelValues(kind).Inc()
		return
	}
	m.migrations.WithLabelValues(kind, state).Inc()
	if ended {
		m.migrationsRun.WithLabelValues(kind).Dec()
		m.migrationDur.WithLabelValues(kind, state).Observe(took.Seconds())
	}
}

// Describe sends the scrape-time gauges' descriptions.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.groups
	ch <- m.members
	ch <- m.epoch
}

// Collect reads the served groups through the coordinator's entry points.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	if m.coord == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	listed, err := listGroups(ctx, m.coord)
	if err != nil {
		return
	}
	byState := map[string]float64{}
	ids := make([]string, 0, len(listed))
	for _, g := range listed {
		byState[g.State.String()]++
		ids = append(ids, g.GroupID)
	}
	for st, n := range byState {
		ch <- prometheus.MustNewConstMetric(m.groups, prometheus.GaugeValue, n, st)
	}
	described, err := describeGroups(ctx, m.coord, ids)
	if err != nil {
		return
	}
	members := map[string]float64{"classic": 0, "streams": 0}
	served := map[string]bool{}
	for i, d := range described {
		if d.ErrorCode != 0 {
			continue
		}
		served[d.Group] = true
		for _, mm := range d.Members {
			if mm.IsClassic {
				members["classic"]++
			} else {
				members["streams"]++
			}
		}
		if i < maxEpochGroups {
			// A label value that is not UTF-8 panics the collector and
			// fails the whole scrape: a group id from a group log written
			// before ids were decoded as Kafka decodes them (issue #42)
			// is shown as Kafka would hold it.
			ch <- prometheus.MustNewConstMetric(m.epoch, prometheus.GaugeValue, float64(d.Epoch), kafkautf8.Decode(d.Group))
		}
	}
	for p, n := range members {
		ch <- prometheus.MustNewConstMetric(m.members, prometheus.GaugeValue, n, p)
	}
	if m.ev != nil {
		m.ev.forget(served)
	}
}
