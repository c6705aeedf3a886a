package capture

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	lines, bytes, dropped, stopped, dumps, flightRemoved prometheus.Counter
	fileOn, flightBytes                                  prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) metrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "streamshift", Subsystem: "capture", Name: name, Help: help})
	}
	g := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "streamshift", Subsystem: "capture", Name: name, Help: help})
	}
	m := metrics{
		lines:   c("lines_total", "Lines written to the capture file."),
		bytes:   c("bytes_total", "Bytes written to the capture file."),
		dropped: c("dropped_total", "Exchanges and events dropped because the capture writer fell behind."),
		stopped: c("file_stopped_total", "Times the capture file stopped on a failed write (a full disk)."),
		dumps:   c("flight_recorder_dumps_total", "Flight recorders written to a file after a failure (one per incident)."),
		flightRemoved: c("flight_recorder_files_removed_total",
			"Oldest flight-recorder files removed to stay within capture.flight-max-files and capture.flight-max-total-bytes."),
		fileOn:      g("file_on", "1 while the capture file is written."),
		flightBytes: g("flight_recorder_bytes", "Memory held by the flight recorders."),
	}
	if reg != nil {
		reg.MustRegister(m.lines, m.bytes, m.dropped, m.stopped, m.dumps, m.flightRemoved, m.fileOn, m.flightBytes)
	}
	return m
}
