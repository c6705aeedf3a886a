package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/backoff"
)

// The backoff of awaitUpstream: from the first to the longest wait between
// two tries, doubling (internal/backoff).
const (
	upstreamRetryFirst = 500 * time.Millisecond
	upstreamRetryMax   = 15 * time.Second
)

// awaitUpstream returns once the upstream cluster answers a Metadata
// request, trying again with backoff while it does not, each failure logged
// as what it is: the upstream is unreachable (not, as the first request to
// fail would say, a problem of the group log it was about to create). It
// fails only when ctx ends (SIGTERM) first. attempt bounds one try.
func awaitUpstream(ctx context.Context, cl *kgo.Client, seeds []string, attempt time.Duration, log zerolog.Logger) error {
	retry := backoff.Backoff{Min: upstreamRetryFirst, Max: upstreamRetryMax}
	for tries := 1; ; tries++ {
		actx, cancel := context.WithTimeout(ctx, attempt)
		_, err := kmsg.NewPtrMetadataRequest().RequestWith(actx, cl)
		cancel()
		if err == nil || answered(err) {
			if tries > 1 {
				log.Info().Strs("upstream", seeds).Int("tries", tries).Msg("upstream reachable")
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("upstream %s unreachable (%d tries): %w", strings.Join(seeds, ","), tries, err)
		}
		if !unreachable(err) {
			// Reached, but not as configured (TLS, …): no wait mends that.
			return fmt.Errorf("upstream %s: %w", strings.Join(seeds, ","), err)
		}
		wait := retry.Next()
		log.Warn().Err(err).Strs("upstream", seeds).Str("retry_in", wait.String()).
			Msg("upstream unreachable: no broker of --upstream answers; retrying (check that the brokers run, the addresses, and upstream-tls: a TLS mismatch times out the same way)")
		select {
		case <-ctx.Done():
			return fmt.Errorf("upstream %s unreachable (%d tries): %w", strings.Join(seeds, ","), tries, err)
		case <-time.After(wait):
		}
	}
}

// answered tells an error the broker sent (SASL refused, not authorized,
// …): the upstream is reachable, and what comes next reports the error in
// its own terms.
func answered(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke)
}

// unreachable tells an error of getting no answer: a dial or a connection
// that failed, a timeout, a connection closed before the first response (a
// broker still starting).
func unreachable(err error) bool {
	var ne net.Error
	var eof *kgo.ErrFirstReadEOF
	return errors.As(err, &ne) || errors.As(err, &eof) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF)
}
