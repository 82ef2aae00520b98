package store

import (
	"context"
	"sync"
)

// foregroundShare is how many foreground (request) write transactions the
// SQLite gate lets through in a row while background ones wait: under a
// saturated writer, requests get 4/5 of it and background work (delivery,
// jobs) the remaining 1/5, so neither can starve the other.
const foregroundShare = 4

type backgroundKey struct{}

// Background marks ctx as background work (job workers, delivery): its
// write transactions queue behind request transactions at the writer gate,
// within their own budget. The job queue marks every worker's context.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// IsBackground reports whether ctx was marked by Background.
func IsBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}

// writeGate orders the write transactions of InTx.
//
// SQLite has one writer connection. Left to database/sql, every waiting
// transaction waits in the pool, and a freed connection goes to a random
// waiter: under load a request can lose that draw for a minute while
// delivery and the job queue keep winning it. The gate admits one InTx at a
// time in arrival order, requests before background work but with a
// reserved share for background work, so only that one transaction and the
// job queue's own few statements wait in the pool.
//
// PostgreSQL has a pool of connections and no single writer: there the gate
// only caps background transactions at half the pool, so delivery and jobs
// can never hold every connection a request needs.
type writeGate struct {
	serial bool

	mu     sync.Mutex
	busy   bool
	fg, bg []*gateWaiter
	streak int // foreground grants in a row while background work waited

	bgSlots chan struct{} // PostgreSQL
}

type gateWaiter struct {
	ready   chan struct{}
	granted bool
}

func newWriteGate(engine Engine, poolSize int) *writeGate {
	if engine == SQLite {
		return &writeGate{serial: true}
	}
	return &writeGate{bgSlots: make(chan struct{}, max(1, poolSize/2))}
}

// acquire waits for the turn of a transaction; call the returned release
// once it has committed or rolled back.
func (g *writeGate) acquire(ctx context.Context, background bool) (func(), error) {
	if !g.serial {
		if !background || g.bgSlots == nil {
			return func() {}, nil
		}
		select {
		case g.bgSlots <- struct{}{}:
			return func() { <-g.bgSlots }, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	g.mu.Lock()
	if !g.busy && len(g.fg) == 0 && len(g.bg) == 0 {
		g.busy = true
		g.mu.Unlock()
		return g.release, nil
	}
	w := &gateWaiter{ready: make(chan struct{})}
	if background {
		g.bg = append(g.bg, w)
	} else {
		g.fg = append(g.fg, w)
	}
	g.mu.Unlock()
	select {
	case <-w.ready:
		return g.release, nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if w.granted {
			// Granted while giving up: pass the turn on.
			g.releaseLocked()
		} else {
			g.fg = removeWaiter(g.fg, w)
			g.bg = removeWaiter(g.bg, w)
		}
		return nil, ctx.Err()
	}
}

func (g *writeGate) release() {
	g.mu.Lock()
	g.releaseLocked()
	g.mu.Unlock()
}

func (g *writeGate) releaseLocked() {
	var next *gateWaiter
	switch {
	case len(g.fg) > 0 && (len(g.bg) == 0 || g.streak < foregroundShare):
		next, g.fg = g.fg[0], g.fg[1:]
		if len(g.bg) > 0 {
			g.streak++
		} else {
			g.streak = 0
		}
	case len(g.bg) > 0:
		next, g.bg = g.bg[0], g.bg[1:]
		g.streak = 0
	default:
		g.busy = false
		return
	}
	next.granted = true
	close(next.ready)
}

func removeWaiter(ws []*gateWaiter, w *gateWaiter) []*gateWaiter {
	for i, x := range ws {
		if x == w {
			return append(ws[:i], ws[i+1:]...)
		}
	}
	return ws
}
