package main

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/capture"
	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/migration"
	"github.com/streamshift/streamshift/proxy"
)

// newRecorder builds the capture from the capture section. It always
// exists, so that a group can be captured at runtime (admin API); with no
// capture file and no group started it copies nothing (Wants is false).
func newRecorder(cfg *config.Config, log zerolog.Logger, reg prometheus.Registerer) (*capture.Recorder, error) {
	c := cfg.Capture
	keys, err := capture.ParseAPIKeys(config.List(c.APIKeys))
	if err != nil {
		return nil, err
	}
	return capture.New(capture.Options{
		Instance: cfg.ProxyID, File: c.File,
		Groups: config.List(c.Groups), ClientIDs: config.List(c.ClientIDs), APIKeys: keys,
		MaxBytes: c.MaxBytes, MaxFiles: c.MaxFiles,
		FlightWindow: c.FlightWindow, FlightMaxBytes: c.FlightMaxBytes, FlightMaxGroups: c.FlightMaxGroups, FlightDir: c.FlightDir,
		FlightMaxFiles: c.FlightMaxFiles, FlightMaxTotalBytes: c.FlightMaxTotalBytes, FlightOnDesignedFence: c.FlightOnDesignedFence,
		Log: log.With().Str("component", "capture").Logger(), Registerer: reg,
	})
}

// captureTap is the proxy's tap in front of the recorder (package capture
// does not import proxy).
type captureTap struct{ r *capture.Recorder }

func (t captureTap) Wants(key int16) bool { return t.r.Wants(key) }

func (t captureTap) Exchange(e *proxy.Exchange) {
	t.r.Exchange(&capture.Exchange{
		ConnID: e.Client.ConnID, ClientAddress: e.Client.RemoteAddr, ClientID: e.Client.ClientID,
		SoftwareName: e.Client.SoftwareName, SoftwareVersion: e.Client.SoftwareVersion,
		Key: e.Key, Version: e.Version, CorrelationID: e.CorrelationID,
		Request: e.Request, Response: e.Response, Local: e.Local, Received: e.Received, Answered: e.At, Opened: e.Opened,
	})
}

// ConnClosed: the capture writes the close of a member's connection.
func (t captureTap) ConnClosed(c proxy.ClientInfo, at time.Time, reason string) {
	t.r.ConnClosed(capture.ConnClose{ConnID: c.ConnID, ClientAddress: c.RemoteAddr, ClientID: c.ClientID, At: at, Reason: reason})
}

// captureEvents hands the coordinator's and the migration's events to the
// recorder.
type captureEvents struct{ r *capture.Recorder }

func (c captureEvents) GroupEvent(e coordinator.GroupEvent) {
	c.r.Event(capture.Event{Kind: e.Kind, Group: e.Group, Member: e.Member, Reason: e.Reason, Fields: e.Fields, Message: e.Message})
}

func (c captureEvents) MigrationEvent(e migration.MigrationEvent) {
	ev := capture.Event{Kind: e.Kind, Group: e.Group, Fields: e.Fields}
	if e.Err != nil {
		ev.Reason = e.Err.Error()
	}
	c.r.Event(ev)
}

// adminWithCapture adds the capture's routes (/capture...) to the admin
// endpoints.
func adminWithCapture(admin http.Handler, r *capture.Recorder) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/capture", r.Handler())
	mux.Handle("/capture/", r.Handler())
	mux.Handle("/", admin)
	return mux
}
