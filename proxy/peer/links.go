package peer

import (
	"sync"
	"time"
)

// Links keeps one link to every peer of the cluster map.
type Links struct {
	o     LinkOptions
	mu    sync.Mutex
	links map[string]*Link
}

// NewLinks makes the set; o is every link's options but Peer and Addr.
func NewLinks(o LinkOptions) *Links {
	return &Links{o: o, links: map[string]*Link{}}
}

// Update makes the links match peers (proxy id → internal address): links
// to new peers start, links to peers that left or moved close.
func (s *Links) Update(peers map[string]string) {
	var stale []*Link
	s.mu.Lock()
	for id, l := range s.links {
		if addr, ok := peers[id]; !ok || addr != l.o.Addr {
			stale = append(stale, l)
			delete(s.links, id)
		}
	}
	for id, addr := range peers {
		if s.links[id] == nil {
			o := s.o
			o.Peer, o.Addr = id, addr
			s.links[id] = NewLink(o)
		}
	}
	s.mu.Unlock()
	for _, l := range stale {
		l.Close()
	}
}

// Link is the link to a peer, nil if the map does not name it.
func (s *Links) Link(peer string) *Link {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.links[peer]
}

// LinkStatus is one link as /cluster shows it.
type LinkStatus struct {
	// Peer is the peer's proxy id, Address its cluster.advertised-address.
	Peer    string `json:"peer"`
	Address string `json:"address"`
	Up      bool   `json:"up"`
	// ConnectedSince is when the link came up; absent while it is down.
	ConnectedSince *time.Time `json:"connectedSince,omitempty"`
	// Inflight is the calls waiting on the link, by kind (serve,
	// upstream, served-groups).
	Inflight map[string]int `json:"inflight"`
	// LastError is why the link last went down or failed to come up, and
	// when; absent if it never did.
	LastError   string     `json:"lastError,omitempty"`
	LastErrorAt *time.Time `json:"lastErrorAt,omitempty"`
}

// Status is every link's state, by peer.
func (s *Links) Status() map[string]LinkStatus {
	s.mu.Lock()
	links := make([]*Link, 0, len(s.links))
	for _, l := range s.links {
		links = append(links, l)
	}
	s.mu.Unlock()
	out := make(map[string]LinkStatus, len(links))
	for _, l := range links {
		out[l.o.Peer] = l.Status()
	}
	return out
}

// Close closes every link.
func (s *Links) Close() { s.Update(nil) }
