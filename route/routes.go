package route

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/anchor"
	"github.com/streamshift/streamshift/proxy"
)

// Options wire the coordinator into the proxy for real clusters: ownership
// of groups, the anchor members and the offset RPCs.
type Options struct {
	Coordinator *coordinator.Coordinator
	// Ownership decides which groups are the proxy's; required.
	Ownership *coordinator.Ownership
	// Anchors keeps the anchor members upstream; required.
	Anchors *anchor.Manager
	// UpstreamMaxVersions maps API keys to the highest version the upstream
	// supports (from its ApiVersions); a missing key counts as kmsg's
	// maximum. Offset requests newer than that are down-converted.
	UpstreamMaxVersions map[int16]int16
	// Metadata, if set, is refreshed before a topology is first handed to
	// the coordinator when its source topics are not in the image yet, so a
	// new group does not wait a heartbeat interval for topics created just
	// before the app started.
	Metadata FreshMetadata
	// AnchorWait bounds how long a commit waits for the anchor to join
	// upstream before the client gets a retriable error. Default 20s.
	AnchorWait time.Duration
	// ClaimWait bounds the upstream check of a first join. Default 10s.
	ClaimWait time.Duration
	Log       zerolog.Logger
}

// FreshMetadata is a metadata source that can fetch on demand
// (*coordinator.UpstreamMetadata).
type FreshMetadata interface {
	Image() coordinator.MetadataImage
	Refresh(ctx context.Context) error
}

// Adapter serves the streams groups through the proxy.
type Adapter struct {
	o Options
}

// New returns an adapter.
func New(o Options) (*Adapter, error) {
	if o.Coordinator == nil || o.Ownership == nil || o.Anchors == nil {
		return nil, fmt.Errorf("proxyadapter: coordinator, ownership and anchors are required")
	}
	if o.AnchorWait <= 0 {
		o.AnchorWait = 20 * time.Second
	}
	if o.ClaimWait <= 0 {
		o.ClaimWait = 10 * time.Second
	}
	return &Adapter{o: o}, nil
}

// offsetsMaxVersion is the newest OffsetCommit/OffsetFetch the adapter
// serves: v9 is what streams members need (member epochs). v10 names topics
// by id only; intercepting it would need an id <-> name map kept in step
// with the upstream's topics for validation, the anchor rewrite and
// down-conversion, for no gain, since a client that gets v9 advertised
// speaks v9 (Kafka clients since 2.x pick the highest common version). So
// the proxy caps both keys at v9 instead of forwarding v10 past the adapter,
// where a streams group's commit would skip validation and, for an owned
// group, fail upstream (its members are not the upstream group's).
const offsetsMaxVersion = 9

// txnOffsetsMaxVersion is the newest TxnOffsetCommit the adapter serves: v6
// names topics by id only, so it is capped as OffsetCommit v10 is. v5 is the
// KIP-890 version; the upstream's range applies below it.
const txnOffsetsMaxVersion = 5

// Register routes the streams-group RPCs and the offset RPCs of p to the
// adapter. OffsetCommit and OffsetFetch are advertised up to v9 even when
// the upstream is older (they are down-converted) and at most v9 when it is
// newer; TxnOffsetCommit is capped at v5.
func (a *Adapter) Register(p *proxy.Proxy) error {
	regs := []struct {
		key       kmsg.Key
		max       int16
		advertise bool
		i         proxy.InterceptorFunc
	}{
		{kmsg.StreamsGroupHeartbeat, 1, true, a.heartbeat},
		{kmsg.StreamsGroupDescribe, 1, true, a.describe},
		{kmsg.OffsetCommit, offsetsMaxVersion, true, a.offsetCommit},
		{kmsg.OffsetFetch, offsetsMaxVersion, true, a.offsetFetch},
		// TxnOffsetCommit keeps the upstream's range: a newer version may
		// change the transaction protocol (KIP-890), not just the layout.
		{kmsg.TxnOffsetCommit, min(a.upstreamMax(int16(kmsg.TxnOffsetCommit)), txnOffsetsMaxVersion), false, a.txnOffsetCommit},
	}
	for _, r := range regs {
		register := p.Register
		if offsetKeyCapped(r.key) {
			register = p.RegisterCapped
		}
		if err := register(int16(r.key), 0, r.max, r.advertise, r.i); err != nil {
			return fmt.Errorf("register streams groups: %w", err)
		}
	}
	return nil
}

// offsetKeyCapped reports the offset keys registered with RegisterCapped,
// whose topic-id versions must not be advertised nor reach the upstream.
func offsetKeyCapped(k kmsg.Key) bool {
	return k == kmsg.OffsetCommit || k == kmsg.OffsetFetch || k == kmsg.TxnOffsetCommit
}

// upstreamMax is the newest version of key the upstream speaks, capped to
// what kmsg knows.
func (a *Adapter) upstreamMax(key int16) int16 {
	top := kmsg.RequestForKey(key).MaxVersion()
	if v, ok := a.o.UpstreamMaxVersions[key]; ok && v < top {
		return v
	}
	return top
}

func (a *Adapter) describe(req *proxy.Request, out proxy.Outcome) {
	client := coordinator.ClientInfo{ClientID: req.Client.ClientID, ClientHost: clientHost(req.Client.RemoteAddr)}
	if !a.o.Coordinator.Handle(req.Body, client, out.Respond) {
		out.Forward()
	}
}

// requestContext ends when the client connection closes or after d.
func requestContext(req *proxy.Request, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	go func() {
		select {
		case <-req.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// kafkaCode is the Kafka error code err wraps (UNKNOWN_SERVER_ERROR if
// none).
func kafkaCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}
