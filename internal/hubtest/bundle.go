package hubtest

import (
	"context"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
)

// Bundle is the fixture module tests start from: a hub with the Cast
// registered, the events it emitted, and a context bounding the test. A
// package embeds it in its own bundle and adds what its tests share (a
// published location, a token…).
type Bundle struct {
	H *Hub
	Cast
	// Events records what the hub emitted: the hub must be started with
	// Configure(true, …) (EachBundle does).
	Events *Recorder
	Ctx    context.Context
}

// NewBundle registers the Cast with h; the bundle's context ends with the
// test or after d.
func NewBundle(t testing.TB, h *Hub, d time.Duration) *Bundle {
	t.Helper()
	events, ok := h.Events.(*Recorder)
	if !ok {
		t.Fatal("the hub records no events: start it with Configure(true, …)")
	}
	return &Bundle{H: h, Cast: h.Cast(t), Events: events, Ctx: Ctx(t, d)}
}

// EachBundle marks t parallel and runs fn in parallel on each engine, on
// the bundle setup builds on a hub started with Configure(true, edit) and
// then opts.
func EachBundle[B any](t *testing.T, edit func(*app.Config), setup func(*testing.T, *Hub) B, fn func(*testing.T, B), opts ...func(*Options)) {
	t.Helper()
	t.Parallel()
	EachWith(t, setup, fn, append([]func(*Options){Configure(true, edit)}, opts...)...)
}
