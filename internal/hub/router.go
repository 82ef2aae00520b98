package hub

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
)

// ForwardRequest is a request to pass on to another party (open or
// addressed routing, transport.md §11).
type ForwardRequest struct {
	// From is the requesting party (OCPI-from of both legs); To the
	// receiving party.
	From, To ocpiclient.Party
	// Module and Interface select the receiver's endpoint: e.g. locations
	// RECEIVER for a CPO's push, tokens SENDER for a GET.
	Module, Interface string
	Method            string
	// Suffix is appended to the endpoint URL ("/NL/TNM/LOC1"); Query is the
	// raw query string.
	Suffix, Query string
	Body          []byte
	// CorrelationID is kept; a new X-Request-ID is made.
	CorrelationID string
}

// Forwarded is the receiver's answer as it goes back to the requester.
type Forwarded struct {
	HTTPStatus int
	Body       []byte
	// Header carries the routing headers of the answer (OCPI-to = the
	// requester, OCPI-from = the receiver) and the paging headers.
	Header http.Header
}

// Forward passes a request to the party it is addressed to and returns the
// answer unchanged (body and last_updated untouched; errors of the receiver,
// 2xxx and 3xxx, are passed back as they are). The hub's own failures are
// errors: 4001 unknown receiver (or one without the endpoint), 4003 receiver
// not connected or unreachable, 4002 timeout, 4000 anything else.
func (h *Hub) Forward(ctx context.Context, fr ForwardRequest) (*Forwarded, error) {
	addr, err := h.route.Address(ctx, "", fr.To, fr.Module, fr.Interface)
	if err != nil {
		return nil, err
	}
	p, base := addr.Platform, addr.URL
	auth, err := h.parties.Auth(p)
	if err != nil {
		return nil, err
	}
	d, converted := h.dialect(p.Version)
	m := Message{Version: p.Version, PlatformID: p.ID, Party: party.Notation(fr.To.CountryCode, fr.To.PartyID), Module: fr.Module,
		Interface: fr.Interface, Method: fr.Method, Path: fr.Suffix, Query: fr.Query, Body: fr.Body}
	if converted {
		send, err := d.Request(ctx, &m)
		if err != nil {
			return nil, err
		}
		if !send {
			return nil, ocpi.Errorf(ocpi.EUNKNOWNRECEIVER, "party %s/%s speaks OCPI %s, which cannot express this request", fr.To.CountryCode, fr.To.PartyID, p.Version)
		}
	}
	u := base + m.Path
	if m.Query != "" {
		u += "?" + m.Query
	}
	req := ocpiclient.Request{Method: m.Method, URL: u, Token: auth.Token, Base64: auth.Base64, To: fr.To, From: fr.From,
		CorrelationID: fr.CorrelationID, MaxAttempts: 1, Timeout: h.cfg.ForwardTimeout, PlatformID: p.ID, Partner: p.Name, Module: fr.Module}
	if m.Body != nil {
		req.Body = m.Body
	}
	ctx, cancel := context.WithTimeout(ctx, h.cfg.ForwardTimeout+time.Second)
	defer cancel()
	resp, err := h.client.Do(ctx, req)
	if resp != nil && resp.Envelope != nil {
		if converted {
			if err := h.convertAnswer(ctx, d, m, resp); err != nil {
				return nil, &ocpi.Error{Code: ocpi.EHUB, Message: "party " + fr.To.CountryCode + "/" + fr.To.PartyID + " answered in OCPI " + p.Version + " with data the hub could not convert", Err: err}
			}
		}
		out := &Forwarded{HTTPStatus: resp.HTTPStatus, Body: withErrorObject(resp, fr.To), Header: http.Header{}}
		for _, k := range []string{"X-Total-Count", "X-Limit", "Location"} {
			if v := resp.Header.Get(k); v != "" {
				out.Header.Set(k, v)
			}
		}
		setRouting(out.Header, fr.From, fr.To)
		return out, nil
	}
	switch ocpiclient.KindOf(err) {
	case ocpiclient.KindTimeout:
		return nil, &ocpi.Error{Code: ocpi.ETIMEOUT, Message: "party " + fr.To.CountryCode + "/" + fr.To.PartyID + " did not answer in time", Err: err}
	case ocpiclient.KindUnreachable:
		return nil, &ocpi.Error{Code: ocpi.ENOTCONNECTED, Message: "party " + fr.To.CountryCode + "/" + fr.To.PartyID + " is unreachable", Err: err}
	}
	if err == nil {
		return nil, ocpi.Errorf(ocpi.EHUB, "party %s/%s answered without an OCPI envelope (HTTP %d)", fr.To.CountryCode, fr.To.PartyID, resp.HTTPStatus)
	}
	return nil, &ocpi.Error{Code: ocpi.EHUB, Message: "forwarding to " + fr.To.CountryCode + "/" + fr.To.PartyID + " failed", Err: err}
}

// setRouting writes the routing headers of an answer: to the requester, from
// the responder.
func setRouting(h http.Header, to, from ocpiclient.Party) { routing.SetHeaders(h, to, from) }

// Pull GETs a platform's SENDER interface of module from since (zero: all),
// following Link pages, and calls fn with each page's objects. The hub is
// OCPI-from, the platform's first party of role OCPI-to (a peer hub's own
// HUB party, when the platform is a peer hub).
func (h *Hub) Pull(ctx context.Context, platformID int64, module string, role party.Role, since time.Time, fn func(items []json.RawMessage) error) error {
	p, err := h.parties.Find(ctx, platformID)
	if err != nil {
		return err
	}
	if p.Status != party.StatusConnected {
		return ocpi.Errorf(ocpi.ENOTCONNECTED, "platform %d is %s", platformID, p.Status)
	}
	base, ok := p.Endpoint(module, ocpi.InterfaceSender)
	if !ok {
		return ocpi.Errorf(ocpi.ENOENDPOINTS, "platform %s offers no %s SENDER interface", p.Name, module)
	}
	auth, err := h.parties.Auth(p)
	if err != nil {
		return err
	}
	to := routing.PulledParty(p, role)
	u, err := url.Parse(base)
	if err != nil {
		return ocpi.Errorf(ocpi.ECLIENTAPI, "platform %s has a malformed %s URL", p.Name, module)
	}
	q := u.Query()
	if !since.IsZero() {
		q.Set("date_from", ocpi.NewDateTime(since).String())
	}
	q.Set("limit", "100")
	u.RawQuery = q.Encode()
	if d, ok := h.dialect(p.Version); ok {
		// A legacy sender's objects have no owner: they are the party's.
		inner := fn
		fn = func(items []json.RawMessage) error {
			out := make([]json.RawMessage, 0, len(items))
			for _, it := range items {
				var head struct {
					ID string `json:"id"`
				}
				_ = json.Unmarshal(it, &head)
				m := Message{Version: p.Version, PlatformID: p.ID, Party: party.Notation(to.CountryCode, to.PartyID), Module: module,
					Interface: ocpi.InterfaceSender, Method: http.MethodGet, Path: PathOf(to.CountryCode, to.PartyID, head.ID)}
				conv, err := d.Answer(ctx, m, it)
				if err != nil {
					// The caller counts objects that fail validation; an
					// object that does not convert is one of them.
					h.logger.WarnContext(ctx, "could not convert a pulled object", "platform_id", p.ID, "module", module, "id", head.ID, "error", err)
					out = append(out, it)
					continue
				}
				out = append(out, conv)
			}
			return inner(out)
		}
	}
	return h.client.GetAll(ctx, ocpiclient.Request{URL: u.String(), Token: auth.Token, Base64: auth.Base64, To: to, From: h.Self(),
		Timeout: h.cfg.Timeout, PlatformID: p.ID, Partner: p.Name, Module: module}, 0, fn)
}

// withErrorObject returns the receiver's answer as it came, except that an
// error answer without our error object gets one (code RECEIVER_ERROR, the
// receiver's status_message), so the requester can rely on the envelope
// shape every hub answer has. data and every other field are kept.
func withErrorObject(resp *ocpiclient.Response, to ocpiclient.Party) []byte {
	if ocpi.IsSuccess(resp.Envelope.StatusCode) || resp.Envelope.Error != nil {
		return resp.Body
	}
	env, err := ocpi.ParseObject(resp.Body)
	if err != nil {
		return resp.Body
	}
	msg := resp.Envelope.StatusMessage
	if msg == "" {
		msg = ocpi.StatusText(resp.Envelope.StatusCode)
	}
	env["error"] = map[string]any{"code": "RECEIVER_ERROR", "description": "party " + to.CountryCode + "/" + to.PartyID + " answered: " + msg}
	b, err := ocpi.MarshalObject(env)
	if err != nil {
		return resp.Body
	}
	return b
}

// convertAnswer rewrites the data of a legacy partner's answer into 2.2.1,
// in resp's body and envelope.
func (h *Hub) convertAnswer(ctx context.Context, d Dialect, m Message, resp *ocpiclient.Response) error {
	if len(resp.Envelope.Data) == 0 {
		return nil
	}
	data, err := d.Answer(ctx, m, resp.Envelope.Data)
	if err != nil {
		return err
	}
	env, err := ocpi.ParseObject(resp.Body)
	if err != nil {
		return err
	}
	env["data"] = data
	b, err := ocpi.MarshalObject(env)
	if err != nil {
		return err
	}
	resp.Body, resp.Envelope.Data = b, data
	return nil
}
