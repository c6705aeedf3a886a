package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The demo's input stream: a record every inputInterval, key a word of
// inputWords, value a line of a few of them starting with the key.
const (
	inputInterval   = 250 * time.Millisecond
	inputPartitions = 3
)

var inputWords = []string{"kafka", "streams", "proxy", "group", "task", "topic", "record", "offset", "broker", "shift"}

// produceInput creates topic through streamshift at bootstrap (if missing)
// and produces the input stream to it, through streamshift, until ctx ends.
func produceInput(ctx context.Context, bootstrap, topic string, log zerolog.Logger) {
	log = log.With().Str("component", "demo-input").Str("topic", topic).Logger()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ClientID("streamshift-demo-input"), kgo.DefaultProduceTopic(topic))
	if err != nil {
		log.Error().Err(err).Msg("input client")
		return
	}
	defer cl.Close()
	for {
		_, err := kadm.NewClient(cl).CreateTopic(ctx, inputPartitions, -1, nil, topic)
		if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
			break
		}
		if ctx.Err() != nil {
			return
		}
		log.Warn().Err(err).Msg("create the input topic; retrying")
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
	log.Info().Msg("producing the demo input")
	tick := time.NewTicker(inputInterval)
	defer tick.Stop()
	for n := 0; ; {
		select {
		case <-ctx.Done():
			log.Info().Int("records", n).Msg("demo input stopped")
			return
		case <-tick.C:
		}
		key, value := inputRecord()
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Value: []byte(value)}).FirstErr(); err != nil {
			if ctx.Err() == nil {
				log.Warn().Err(err).Msg("produce")
			}
			continue
		}
		if n++; n%100 == 0 {
			log.Info().Int("records", n).Msg("demo input")
		}
	}
}

// inputRecord is one record of the input stream.
func inputRecord() (key, value string) {
	line := make([]string, 2+rand.IntN(4))
	for i := range line {
		line[i] = inputWords[rand.IntN(len(inputWords))]
	}
	return line[0], strings.Join(line, " ")
}
