package simwire

import "context"

// Gate holds a simulator's requests while it is shut (a partner that does
// not answer). The zero value is open; the simulator's lock guards it.
type Gate struct{ ch chan struct{} }

// Shut holds the requests that arrive from now on (hold), or lets every
// held request go (!hold).
func (g *Gate) Shut(hold bool) {
	if hold && g.ch == nil {
		g.ch = make(chan struct{})
	}
	if !hold && g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
}

// Held is what a request arriving now waits on (Pass): nil while the gate
// is open.
func (g *Gate) Held() <-chan struct{} { return g.ch }

// Pass waits until held is let go (a nil held passes at once); false when
// ctx ends first.
func Pass(ctx context.Context, held <-chan struct{}) bool {
	if held == nil {
		return true
	}
	select {
	case <-held:
		return true
	case <-ctx.Done():
		return false
	}
}
