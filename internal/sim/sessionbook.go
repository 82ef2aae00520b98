package sim

import (
	"iter"
	"maps"
	"net/http"
	"strings"
	"sync"

	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// SessionBook keeps the sessions a simulated receiver (an eMSP, a PTP) is
// pushed, by "CC/PID/ID". The zero value is ready to use.
type SessionBook struct {
	mu       sync.Mutex
	sessions map[string]map[string]any
}

// Receive returns the handler of p's sessions receiver below marker: PUT,
// PATCH (merged into the stored session by patch; 404 for an unknown one)
// and GET of /{cc}/{pid}/{id}.
func (b *SessionBook) Receive(p *Platform, marker string, patch func(cur, obj map[string]any)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		seg := simwire.Segments(r.URL.Path, marker)
		if len(seg) != 3 {
			p.Reply(w, http.StatusNotFound, 2000, nil)
			return
		}
		key := strings.ToUpper(strings.Join(seg, "/"))
		b.mu.Lock()
		defer b.mu.Unlock()
		switch r.Method {
		case http.MethodGet:
			if s, found := b.sessions[key]; found {
				p.OK(w, s)
				return
			}
			p.Reply(w, http.StatusNotFound, 2000, nil)
		case http.MethodPut, http.MethodPatch:
			obj, read := p.ReadObject(w, r)
			if !read {
				return
			}
			if r.Method == http.MethodPatch {
				cur, found := b.sessions[key]
				if !found {
					p.Reply(w, http.StatusNotFound, 2000, nil)
					return
				}
				patch(cur, obj)
				obj = cur
			}
			if b.sessions == nil {
				b.sessions = map[string]map[string]any{}
			}
			b.sessions[key] = obj
			p.OK(w, nil)
		default:
			p.Reply(w, http.StatusMethodNotAllowed, 2000, nil)
		}
	}
}

// Session returns a copy of a session (nil if none).
func (b *SessionBook) Session(cc, pid, id string) map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return simwire.Clone(b.sessions[strings.ToUpper(cc+"/"+pid+"/"+id)])
}

// Len returns how many sessions the book holds.
func (b *SessionBook) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sessions)
}

// Find returns what find gives for the sessions held (it must copy what it
// returns: the book's lock is held only while it runs).
func (b *SessionBook) Find(find func(iter.Seq[map[string]any]) map[string]any) map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return find(maps.Values(b.sessions))
}
