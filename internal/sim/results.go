package sim

import (
	"net/http"
	"sync"
)

// ResultLog keeps the CommandResults a simulated platform receives at the
// response_urls it gives (an eMSP's, a PTP's), for tests to find by uid.
// The zero value is ready to use.
type ResultLog struct {
	mu      sync.Mutex
	results []Result
}

// Receive returns the handler of p's response_urls below marker: it reads
// a CommandResult (ReadResult), keeps it and answers 1000.
func (l *ResultLog) Receive(p *Platform, marker string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		res, read := p.ReadResult(w, r, marker)
		if !read {
			return
		}
		l.mu.Lock()
		l.results = append(l.results, res)
		l.mu.Unlock()
		p.OK(w, nil)
	}
}

// For returns the results received for a response_url uid ("" for all).
func (l *ResultLog) For(uid string) []Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Result
	for _, r := range l.results {
		if uid == "" || r.UID == uid {
			out = append(out, r)
		}
	}
	return out
}
