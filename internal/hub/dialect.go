package hub

import (
	"context"
	"encoding/json"
)

// Dialect converts what the hub sends to partners that speak another OCPI
// version than the hub's model (2.2.1): pushes from the outbox and
// forwarded requests are converted at delivery time, so one outbox serves
// receivers of every version and a change of a partner's version applies to
// what is still queued for it.
type Dialect interface {
	// Request converts an outgoing request in place. ok is false when the
	// request has no equivalent in the version: it is then not sent (a push
	// is recorded as skipped).
	Request(ctx context.Context, m *Message) (ok bool, err error)
	// Answer converts the data of the partner's answer to m (a forwarded
	// request) into 2.2.1.
	Answer(ctx context.Context, m Message, data json.RawMessage) (json.RawMessage, error)
}

// Message is a request to a partner, as a Dialect sees it.
type Message struct {
	// Version is the partner's OCPI version; PlatformID and Party (CC/PID)
	// name it for logs and metrics.
	Version    string
	PlatformID int64
	Party      string
	// Module and Interface name the partner's endpoint; Path and Query
	// follow its URL.
	Module, Interface string
	Method            string
	Path, Query       string
	// Body is the JSON body (nil for none).
	Body []byte
}

// Speak makes d the dialect of partners speaking version. Call it while
// wiring, before Start.
func (h *Hub) Speak(version string, d Dialect) { h.dialects[version] = d }

// dialect returns the dialect of a version, if it needs one.
func (h *Hub) dialect(version string) (Dialect, bool) {
	d, ok := h.dialects[version]
	return d, ok
}

// Convert converts a request the caller sends a partner of version itself
// (outside the outbox and Forward, e.g. a command result relayed to a
// response_url). ok is false when it has no form in that version.
func (h *Hub) Convert(ctx context.Context, version string, m *Message) (ok bool, err error) {
	d, found := h.dialect(version)
	if !found {
		return true, nil
	}
	m.Version = version
	return d.Request(ctx, m)
}
