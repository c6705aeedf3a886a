package proxy

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// produceAcks reads the acks field of a Produce request msg. acks=0 requests
// get no response, so they must not take a slot.
func produceAcks(msg []byte) (int16, error) {
	h, err := kafkaframe.ParseRequestHeader(msg)
	if err != nil {
		return 0, err
	}
	r := kbin.Reader{Src: msg[h.BodyAt:]}
	if h.Version >= 3 {
		// transactional_id: compact strings encode length+1 (0 = null).
		if flexible, _ := kafkaframe.RequestFlexible(h.Key, h.Version); flexible {
			r.CompactNullableString()
		} else {
			r.NullableString()
		}
	}
	acks := r.Int16()
	if !r.Ok() {
		return 0, errors.New("produce request truncated before acks")
	}
	return acks, nil
}
