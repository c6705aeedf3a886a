package proxytest

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// Kind is what a handler did with its request.
type Kind int

const (
	// Pending: no outcome yet.
	Pending Kind = iota
	// Responded: answered locally (Outcome.Respond).
	Responded
	// Forwarded: sent upstream untouched (Outcome.Forward).
	Forwarded
	// Rewritten: sent upstream rewritten (Outcome.ForwardRewritten).
	Rewritten
	// Closed: the proxy would close the client connection: the handler
	// panicked or gave an outcome the proxy cannot send.
	Closed
)

func (k Kind) String() string {
	return [...]string{"pending", "responded", "forwarded", "forwarded rewritten", "closed"}[k]
}

// Result is a handler's outcome as the proxy would carry it out.
type Result struct {
	Kind Kind
	// Response (Responded) is the answer as the client decodes it, at the
	// request's version.
	Response kmsg.Response
	// Request and Version (Rewritten) are what goes upstream, as the broker
	// decodes it; OnResponse transforms the broker's answer (may be nil).
	Request    kmsg.Request
	Version    int16
	OnResponse func(kmsg.Response) kmsg.Response
	// Reason (Closed) says why.
	Reason string
	// Extra counts outcome calls after the first, which the proxy ignores
	// (and logs): a handler completing a request twice is a bug.
	Extra int

	clientVersion int16 // the request's, for Answer
}

// Outcome records what a handler decides for one request. It implements
// proxy.Outcome and checks what the proxy checks.
type Outcome struct {
	key, version int16

	mu     sync.Mutex
	res    Result
	result chan struct{}
}

// NewOutcome is the outcome of req.
func NewOutcome(req *proxy.Request) *Outcome {
	return &Outcome{key: req.Key, version: req.Version, result: make(chan struct{})}
}

// Serve runs i on req on a goroutine of its own, as the proxy does (a panic
// closes the connection), and returns its outcome to Wait on.
func Serve(i proxy.InterceptorFunc, req *proxy.Request) *Outcome {
	o := NewOutcome(req)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				o.set(Result{Kind: Closed, Reason: fmt.Sprintf("interceptor panicked: %v", r)})
			}
		}()
		i(req, o)
	}()
	return o
}

// Wait returns the outcome once there is one, or ctx's error.
func (o *Outcome) Wait(ctx context.Context) (Result, error) {
	select {
	case <-o.result:
	case <-ctx.Done():
		return Result{}, fmt.Errorf("no outcome of %s: %w", kmsg.NameForKey(o.key), ctx.Err())
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.res, nil
}

// Result is the outcome so far (Kind Pending if none).
func (o *Outcome) Result() Result {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.res
}

func (o *Outcome) set(r Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.res.Kind != Pending {
		o.res.Extra++
		return
	}
	o.res = r
	o.res.clientVersion = o.version
	close(o.result)
}

// Respond records resp as the client would decode it.
func (o *Outcome) Respond(resp kmsg.Response) {
	if resp == nil || resp.Key() != o.key {
		o.set(Result{Kind: Closed, Reason: fmt.Sprintf("Respond needs a %s response, got %T", kmsg.NameForKey(o.key), resp)})
		return
	}
	seen, err := roundTripResponse(resp, o.version)
	if err != nil {
		o.set(Result{Kind: Closed, Reason: err.Error()})
		return
	}
	o.set(Result{Kind: Responded, Response: seen})
}

// Forward records a forward of the original request.
func (o *Outcome) Forward() { o.set(Result{Kind: Forwarded}) }

// ForwardRewritten records req as the broker would decode it at version.
func (o *Outcome) ForwardRewritten(req kmsg.Request, version int16, onResponse func(kmsg.Response) kmsg.Response) {
	if req == nil || req.Key() != o.key {
		o.set(Result{Kind: Closed, Reason: fmt.Sprintf("ForwardRewritten needs a %s request, got %T", kmsg.NameForKey(o.key), req)})
		return
	}
	if version < 0 || version > req.MaxVersion() {
		o.set(Result{Kind: Closed, Reason: fmt.Sprintf("ForwardRewritten: %s v%d unknown", kmsg.NameForKey(o.key), version)})
		return
	}
	req.SetVersion(version)
	seen, err := roundTripRequest(req)
	if err != nil {
		o.set(Result{Kind: Closed, Reason: err.Error()})
		return
	}
	o.set(Result{Kind: Rewritten, Request: seen, Version: version, OnResponse: onResponse})
}

// Answer is what the client gets when the broker answers a rewritten
// forward with resp: resp as decoded at the forward's version, through
// OnResponse, as the client decodes it at its request's version. It fails
// unless the outcome is Rewritten.
func (r Result) Answer(resp kmsg.Response) (kmsg.Response, error) {
	if r.Kind != Rewritten {
		return nil, fmt.Errorf("answer: the outcome is %s, not a rewritten forward", r.Kind)
	}
	if resp == nil || resp.Key() != r.Request.Key() {
		return nil, fmt.Errorf("answer: want a %s response, got %T", kmsg.NameForKey(r.Request.Key()), resp)
	}
	resp, err := roundTripResponse(resp, r.Version)
	if err != nil {
		return nil, err
	}
	if r.OnResponse != nil {
		if resp, err = callOnResponse(r.OnResponse, resp); err != nil {
			return nil, err
		}
	}
	if resp == nil || resp.Key() != r.Request.Key() {
		return nil, fmt.Errorf("answer: OnResponse returned %T", resp)
	}
	return roundTripResponse(resp, r.clientVersion)
}

// callOnResponse runs fn as the proxy does: a panic fails the answer (the
// proxy closes the client connection).
func callOnResponse(fn func(kmsg.Response) kmsg.Response, resp kmsg.Response) (out kmsg.Response, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("answer: onResponse panicked: %v", r)
		}
	}()
	return fn(resp), nil
}
