// Package ptpsim is a simulated Payment Terminal Provider on loopback (tests, demo and dev only).
package ptpsim

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// PTP is a simulated Payment Terminal Provider (payments.md §1): it owns
// terminals and registers them with the hub, starts pre-authorised
// sessions with an authorization_reference, receives the sessions and CDRs
// of those, and confirms what it captured. It speaks 2.2.1 (the Payments
// module as our custom module) or 2.3.0, as sim.Options.Versions say.
//
// Its endpoints: payments SENDER (the CPO side's terminal assignments,
// activations and deactivations arrive there), sessions and cdrs
// RECEIVER, and commands SENDER (the response_urls of its commands).
type PTP struct {
	*sim.Platform
	mu          sync.Mutex
	terminals   map[string]map[string]any
	assignments []map[string]any
	activations []map[string]any
	deactivated []string
	sessions    sim.SessionBook
	cdrs        []map[string]any
	results     sim.ResultLog
	seq         int
}

// Start starts a PTP simulator.
func Start(name, cc, pid string, logger *slog.Logger, tweak ...func(*sim.Options)) (*PTP, error) {
	p, err := sim.StartAs("PTP", name, cc, pid, logger, tweak...)
	if err != nil {
		return nil, err
	}
	t := &PTP{Platform: p, terminals: map[string]map[string]any{}}
	p.Handle("payments", "SENDER", "/ptp/payments", t.handlePayments)
	p.Handle("sessions", "RECEIVER", "/ptp/sessions", t.sessions.Receive(p, "/ptp/sessions", maps.Copy))
	p.Handle("cdrs", "RECEIVER", "/ptp/cdrs", t.handleCDR)
	p.Handle("commands", "SENDER", "/ptp/commands", t.results.Receive(p, "/ptp/commands"))
	return t, nil
}

// Is230 reports whether the PTP speaks 2.3.0 with the hub (prices in the
// 2.3.0 shape).
func (t *PTP) Is230() bool { return ocpi.IsVersion230(t.HubVersion()) }

// handlePayments is the PTP's payments sender: its terminals (GET), the
// assignments a CPO makes (PATCH or PUT), activation and deactivation.
func (t *PTP) handlePayments(w http.ResponseWriter, r *http.Request) {
	seg := simwire.Segments(r.URL.Path, "/ptp/payments")
	if len(seg) == 0 || seg[0] != "terminals" {
		t.Reply(w, http.StatusNotFound, 2000, nil)
		return
	}
	seg = seg[1:]
	var body map[string]any
	if r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
		_ = json.NewDecoder(r.Body).Decode(&body)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && len(seg) == 0:
		t.OKList(w, simwire.Clones(t.terminals))
	case r.Method == http.MethodGet && len(seg) == 1:
		if term, ok := t.terminals[strings.ToUpper(seg[0])]; ok {
			t.OK(w, term)
			return
		}
		t.Reply(w, http.StatusNotFound, 2000, nil)
	case r.Method == http.MethodPost && len(seg) == 1 && seg[0] == "activate":
		t.activations = append(t.activations, body)
		t.OK(w, nil)
	case r.Method == http.MethodPost && len(seg) == 2 && seg[1] == "deactivate":
		t.deactivated = append(t.deactivated, seg[0])
		t.OK(w, nil)
	case (r.Method == http.MethodPatch || r.Method == http.MethodPut) && len(seg) == 1:
		term, ok := t.terminals[strings.ToUpper(seg[0])]
		if !ok {
			t.Reply(w, http.StatusNotFound, 2000, nil)
			return
		}
		for k, v := range body {
			term[k] = v
		}
		a := simwire.Clone(body)
		a["terminal_id"] = seg[0]
		t.assignments = append(t.assignments, a)
		t.OK(w, nil)
	default:
		t.Reply(w, http.StatusMethodNotAllowed, 2000, nil)
	}
}

// handleCDR is the PTP's CDRs receiver.
func (t *PTP) handleCDR(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		t.Reply(w, http.StatusMethodNotAllowed, 2000, nil)
		return
	}
	obj, read := t.ReadObject(w, r)
	if !read {
		return
	}
	t.mu.Lock()
	t.cdrs = append(t.cdrs, obj)
	n := len(t.cdrs)
	t.mu.Unlock()
	w.Header().Set("Location", fmt.Sprintf("%s/ocpi/%s/ptp/cdrs/%d", t.URL(), t.HubVersion(), n))
	t.Reply(w, http.StatusCreated, 1000, nil)
}

// payments calls the hub's payments endpoint of an interface role (the hub
// is the RECEIVER of the PTP's terminals and confirmations) plus a path.
func (t *PTP) payments(ctx context.Context, method, path string, body any) (*ocpiclient.Response, error) {
	base, ok := t.HubEndpoint("payments", "RECEIVER")
	if !ok {
		return nil, fmt.Errorf("the hub lists no payments RECEIVER")
	}
	return t.Raw(ctx, method, base+path, body, nil)
}

// NewTerminal returns a terminal of this PTP with the given id and its
// last_updated, ready to be registered; extra fields are merged in.
func NewTerminal(id string, extra map[string]any) map[string]any {
	// A sample object belongs to no platform: it is stamped with the real
	// clock, like the platforms' default.
	term := map[string]any{"terminal_id": id, "address": "MG Road 1", "city": "Bengaluru", "country": "IND",
		"invoice_creator": "CPO", "last_updated": ocpi.NewDateTime(clock.Real{}.Now())}
	for k, v := range extra {
		term[k] = v
	}
	return term
}

// CreateTerminal registers a terminal with the hub (POST) and keeps it as
// its own; the hub's answer is returned whatever it is.
func (t *PTP) CreateTerminal(ctx context.Context, term map[string]any) (*ocpiclient.Response, error) {
	resp, err := t.payments(ctx, http.MethodPost, "/terminals", term)
	if err == nil && resp.Envelope != nil && resp.Envelope.StatusCode == 1000 {
		id, _ := term["terminal_id"].(string)
		t.mu.Lock()
		t.terminals[strings.ToUpper(id)] = simwire.Clone(term)
		t.mu.Unlock()
	}
	return resp, err
}

// UpdateTerminal sends a PUT or PATCH of one of its terminals to the hub.
func (t *PTP) UpdateTerminal(ctx context.Context, method, id string, body map[string]any) (*ocpiclient.Response, error) {
	resp, err := t.payments(ctx, method, "/terminals/"+url.PathEscape(id), body)
	if err == nil && resp.Envelope != nil && resp.Envelope.StatusCode == 1000 {
		t.mu.Lock()
		if term := t.terminals[strings.ToUpper(id)]; term != nil {
			for k, v := range body {
				term[k] = v
			}
		}
		t.mu.Unlock()
	}
	return resp, err
}

// Terminal returns the PTP's own copy of a terminal (assignments applied).
func (t *PTP) Terminal(id string) map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	return simwire.Clone(t.terminals[strings.ToUpper(id)])
}

// Assignments returns the assignment PATCHes (and PUTs) received, oldest
// first, each with its terminal_id.
func (t *PTP) Assignments() []map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	return simwire.CloneList(t.assignments)
}

// Activations and Deactivations return what CPOs asked through the hub.
func (t *PTP) Activations() []map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]map[string]any(nil), t.activations...)
}

// Deactivations returns the terminal ids CPOs asked to deactivate.
func (t *PTP) Deactivations() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.deactivated...)
}

// Session returns the PTP's copy of a session pushed to it.
func (t *PTP) Session(cc, pid, id string) map[string]any { return t.sessions.Session(cc, pid, id) }

// SessionByReference returns the PTP's copy of the session carrying an
// authorization_reference (nil if none yet).
func (t *PTP) SessionByReference(ref string) map[string]any {
	return t.sessions.Find(func(sessions iter.Seq[map[string]any]) map[string]any { return byReference(sessions, ref) })
}

// CDRByReference returns the CDR carrying an authorization_reference (nil
// if none yet).
func (t *PTP) CDRByReference(ref string) map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	return byReference(slices.Values(t.cdrs), ref)
}

// byReference returns a copy of the first of objs that carries the
// authorization_reference ref (nil if none does).
func byReference(objs iter.Seq[map[string]any], ref string) map[string]any {
	for obj := range objs {
		if r, _ := obj["authorization_reference"].(string); strings.EqualFold(r, ref) {
			return simwire.Clone(obj)
		}
	}
	return nil
}

// Results returns the command results received for a response_url uid.
func (t *PTP) Results(uid string) []sim.Result { return t.results.For(uid) }
