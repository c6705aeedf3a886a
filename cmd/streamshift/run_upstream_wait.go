package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The backoff of awaitUpstream: from the first to the longest wait between
// two tries, doubling.
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
	wait := upstreamRetryFirst
	for tries := 1; ; tries++ {
		actx, cancel := context.WithTimeout(ctx, attempt)
		_, err := kmsg.NewPtrMetadataRequest().RequestWith(actx, cl)
		cancel()
		if err == nil {
			if tries > 1 {
				log.Info().Strs("upstream", seeds).Int("tries", tries).Msg("upstream reachable")
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("upstream %s unreachable (%d tries): %w", strings.Join(seeds, ","), tries, err)
		}
		log.Warn().Err(err).Strs("upstream", seeds).Str("retry_in", wait.String()).
			Msg("upstream unreachable: no broker of --upstream answers; retrying (check the addresses, and that the brokers run)")
		select {
		case <-ctx.Done():
			return fmt.Errorf("upstream %s unreachable (%d tries): %w", strings.Join(seeds, ","), tries, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, upstreamRetryMax)
	}
}
