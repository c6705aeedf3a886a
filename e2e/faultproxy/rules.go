package faultproxy

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ruleKind is one of Kafka's four fault primitives (KAFKA-21074's
// KafkaProtocolFaultProxy: injectError, disconnectOn, delayOn,
// blackholeClient).
type ruleKind int

const (
	kindError ruleKind = iota
	kindDisconnect
	kindDelay
	kindBlackhole
)

// Match narrows a rule to the requests of one group and/or one client. The
// zero Match is every request of the rule's key.
type Match struct {
	// Group: only requests about this group (JoinGroup's, OffsetCommit's,
	// a group FindCoordinator's key, ...). Requests that name no group do
	// not match a rule with a Group.
	Group string
	// ClientID: only requests whose client id contains this substring.
	ClientID string
	// Times: the rule acts on at most this many requests, then lets the
	// rest through (0: no limit). A disconnect on each of a producer's
	// EndTxns would outlast its transaction timeout; a few show the gap.
	Times int64
}

// Rule is one fault switched on; Off switches it off. Hits counts the
// requests it acted on.
type Rule struct {
	p     *Proxy
	kind  ruleKind
	key   int16 // -1: any key (a blackhole)
	code  int16
	delay time.Duration
	// afterForward: a disconnect that lets the request reach the broker and
	// drops its answer (the broker acted, the client does not know).
	afterForward bool
	match        Match
	hits         atomic.Int64
}

// Off switches the rule off; requests already acted on stay so (a
// blackholed request is never answered).
func (r *Rule) Off() { r.p.remove(r) }

// Hits is how many requests the rule acted on.
func (r *Rule) Hits() int64 { return r.hits.Load() }

// matches reports whether the rule applies to a request.
func (r *Rule) matches(h header) bool {
	if r.match.Times > 0 && r.hits.Load() >= r.match.Times {
		return false
	}
	if r.key >= 0 && r.key != h.key {
		return false
	}
	if r.match.ClientID != "" && !strings.Contains(h.clientID, r.match.ClientID) {
		return false
	}
	if r.match.Group != "" {
		if h.req == nil {
			return false
		}
		found := false
		for _, g := range groupsOf(h.req) {
			found = found || g == r.match.Group
		}
		if !found {
			return false
		}
	}
	return true
}

// rules is the proxy's switched-on faults, in the order they were added.
type rules struct {
	mu   sync.Mutex
	list []*Rule
}

func (p *Proxy) add(r *Rule) *Rule {
	r.p = p
	p.rules.mu.Lock()
	defer p.rules.mu.Unlock()
	p.rules.list = append(p.rules.list, r)
	return r
}

func (p *Proxy) remove(r *Rule) {
	p.rules.mu.Lock()
	defer p.rules.mu.Unlock()
	for i, x := range p.rules.list {
		if x == r {
			p.rules.list = append(p.rules.list[:i:i], p.rules.list[i+1:]...)
			return
		}
	}
}

// Clear switches every rule off.
func (p *Proxy) Clear() {
	p.rules.mu.Lock()
	defer p.rules.mu.Unlock()
	p.rules.list = nil
}

// verdict is what the rules say about one request: the first blackhole,
// disconnect or error rule that matches wins, in that order; delays add up.
type verdict struct {
	act   *Rule // kindBlackhole, kindDisconnect or kindError; nil: forward
	delay time.Duration
}

func (p *Proxy) judge(h header) verdict {
	p.rules.mu.Lock()
	defer p.rules.mu.Unlock()
	var v verdict
	for _, kind := range []ruleKind{kindBlackhole, kindDisconnect, kindError} {
		for _, r := range p.rules.list {
			// An error is answered only where kmsg can build the answer.
			if r.kind == kind && r.matches(h) && (kind != kindError || h.req != nil) {
				v.act = r
				break
			}
		}
		if v.act != nil {
			break
		}
	}
	if v.act != nil {
		v.act.hits.Add(1)
		return v
	}
	for _, r := range p.rules.list {
		if r.kind == kindDelay && r.matches(h) {
			r.hits.Add(1)
			v.delay += r.delay
		}
	}
	return v
}

// InjectError answers every request of key (narrowed by m) with code
// itself, as the broker would answer it failing: the response kind of the
// request's version, the correlation id kept, in order with the
// connection's other answers. The broker never sees the request.
func (p *Proxy) InjectError(key, code int16, m Match) *Rule {
	return p.add(&Rule{kind: kindError, key: key, code: code, match: m})
}

// DisconnectOn closes the client's connection (and the proxy's upstream
// one) when a request of key (narrowed by m) arrives, before the broker sees
// it.
func (p *Proxy) DisconnectOn(key int16, m Match) *Rule {
	return p.add(&Rule{kind: kindDisconnect, key: key, match: m})
}

// DisconnectAfter forwards a request of key (narrowed by m) to the broker,
// then closes the client's connection instead of answering: the broker acted
// on it (an EndTxn committed, an offset stored) and the client never learns
// of it. Kafka's exactly-once commit gap.
func (p *Proxy) DisconnectAfter(key int16, m Match) *Rule {
	return p.add(&Rule{kind: kindDisconnect, key: key, match: m, afterForward: true})
}

// DelayOn holds the answer to every request of key (narrowed by m) for d
// after the broker gave it. The answers after it on the same connection
// wait behind it, as they would behind a slow broker.
func (p *Proxy) DelayOn(key int16, d time.Duration, m Match) *Rule {
	return p.add(&Rule{kind: kindDelay, key: key, delay: d, match: m})
}

// BlackholeClient swallows every request of the clients whose client id
// contains sub: never forwarded, never answered, the connection kept open.
// The client sees a silent broker until its own timeouts fire.
func (p *Proxy) BlackholeClient(sub string) *Rule {
	return p.add(&Rule{kind: kindBlackhole, key: -1, match: Match{ClientID: sub}})
}

// answer builds the error answer of an error rule to h.
func (r *Rule) answer(h header) ([]byte, error) {
	resp, err := errorAnswer(h.req, r.code)
	if err != nil {
		return nil, err
	}
	return responseFrame(h.corr, h.flexible, resp), nil
}
