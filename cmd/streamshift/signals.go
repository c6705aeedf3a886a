package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// stopSignal is the cause of a context ended by SIGINT or SIGTERM: the
// stop line names the signal.
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return signalName(s.sig) + " received" }

// signalName is a signal's name as an operator sends it (kill -TERM):
// Go's String is the C library's description ("terminated").
func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// onStopSignal returns a context that ends at the first SIGINT or SIGTERM,
// with a stopSignal as its cause; stop releases the signals. Later
// signals are ignored: the stop under way (a drain, a hand-over) ends on
// its own bounds.
func onStopSignal(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			cancel(stopSignal{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// stopCause says what ended ctx: the signal's name, or the cause's text
// when no signal did (a test, the demo's own end).
func stopCause(ctx context.Context) (signal string, cause string) {
	err := context.Cause(ctx)
	var s stopSignal
	if errors.As(err, &s) {
		return signalName(s.sig), err.Error()
	}
	if err == nil {
		return "", ""
	}
	return "", err.Error()
}
