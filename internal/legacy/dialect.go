package legacy

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
)

// Lookups give a Dialect the hub's data that legacy objects carry and 2.2.1
// ones only name: a session's or CDR's whole location, a token for the
// answer to an authorization, the current state of a session.
type Lookups struct {
	// LocationFunc returns a stored location; found is false (and the
	// location nil) when the hub holds none.
	LocationFunc func(ctx context.Context, cc, pid, id string) (loc *ocpi.Location, found bool, err error)
	// SessionFunc returns a stored session; found is false when unknown.
	SessionFunc func(ctx context.Context, cc, pid, id string) (s *ocpi.Session, found bool, err error)
	// TokenFunc returns a stored token; found is false when unknown.
	TokenFunc func(ctx context.Context, cc, pid, uid, typ string) (t *ocpi.Token, found bool, err error)
	// CommandWait is the timeout, in seconds, the hub announces for a 2.1.1
	// CPO's command (2.1.1 answers carry none; the hub then waits its
	// default).
	CommandWait int
}

// Dialect is the hub.Dialect of one legacy version: it converts the hub's
// 2.2.1 pushes and forwarded requests into the partner's version, and the
// partner's answers back. Modules it does not know are not sent (a 2.2.1
// body is never passed to a legacy partner as it is).
type Dialect struct {
	version string
	rec     *Recorder
	now     func() time.Time
	look    Lookups
}

// NewDialect returns the dialect of version (v211.V211 or v211.V20).
func NewDialect(version string, rec *Recorder, now func() time.Time, look Lookups) *Dialect {
	if now == nil {
		now = time.Now
	}
	return &Dialect{version: version, rec: rec, now: now, look: look}
}

// converted is what converting one message gave.
type converted struct {
	body []byte
	loss v211.Loss
	ok   bool
}

// Request implements hub.Dialect.
func (d *Dialect) Request(ctx context.Context, m *hub.Message) (bool, error) {
	d.rec.Traffic(d.version, m.Party, Out)
	c, err := d.request(ctx, m)
	d.rec.Lost(ctx, d.version, m.Module, m.Method+" "+m.Path, c.loss)
	if err != nil || !c.ok {
		return false, err
	}
	if c.body != nil {
		m.Body = c.body
	}
	return true, nil
}

func (d *Dialect) request(ctx context.Context, m *hub.Message) (converted, error) {
	c := converted{ok: true}
	var err error
	switch m.Module {
	case "locations":
		level := locationLevel(m.Path)
		switch {
		case m.Method == http.MethodPut && m.Body != nil:
			c.body, c.loss, c.ok, err = v211.LocationOut(d.version, level, m.Body)
		case m.Method == http.MethodPatch && m.Body != nil:
			// A location a legacy partner must not see (unpublished) is not
			// patched there either.
			if seg := pathSegments(m.Path); len(seg) >= 3 {
				loc, found, err := d.look.LocationFunc(ctx, seg[0], seg[1], seg[2])
				if err != nil {
					return converted{}, err
				}
				if found && !v211.Shareable(loc) {
					return converted{loss: v211.Loss{"publish: the location is not published; not sent to legacy partners"}}, nil
				}
			}
			c, err = d.patch(m.Body, func(p ocpi.Object) (ocpi.Object, v211.Loss, bool) { return v211.LocationPatchFrom221(level, p) }, "locations", level)
		}
	case "tariffs":
		if m.Method == http.MethodPut && m.Body != nil {
			c.body, c.loss, c.ok, err = v211.TariffOut(d.version, m.Body)
		}
	case "tokens":
		c, err = d.token(m)
	case "sessions":
		c, err = d.session(ctx, m)
	case "cdrs":
		if m.Method == http.MethodPost && m.Body != nil {
			c, err = d.cdr(ctx, m.Body)
		}
	case "commands":
		c, err = d.command(m)
	default:
		return converted{}, nil
	}
	return c, err
}

// patch converts a PATCH body with fn, field by field.
func (d *Dialect) patch(body []byte, fn func(ocpi.Object) (ocpi.Object, v211.Loss, bool), module, level string) (converted, error) {
	p, err := ocpi.ParseObject(body)
	if err != nil {
		return converted{}, err
	}
	out, loss, ok := fn(p)
	return d.encode(module, level, out, loss, ok)
}

// token converts a token push to a CPO (2.1.1 token URLs have no ?type=;
// the token body says its type) or an authorization forwarded to an eMSP.
func (d *Dialect) token(m *hub.Message) (converted, error) {
	path, query, _ := strings.Cut(m.Path, "?")
	if strings.HasSuffix(path, "/authorize") {
		// POST {tokens}/{uid}/authorize?type=: the body (LocationReferences)
		// is the same; the type must be a 2.1.1 one.
		q, _ := url.ParseQuery(query)
		var loss v211.Loss
		if t := q.Get("type"); t != "" && t != "RFID" && t != "OTHER" {
			q.Set("type", "OTHER")
			loss.Add("type", "%s is an OTHER token in 2.1.1", t)
		}
		m.Path = path
		if m.Query != "" || len(q) > 0 {
			m.Query = q.Encode()
		}
		return converted{ok: true, loss: loss}, nil
	}
	m.Path = path
	switch {
	case m.Method == http.MethodPut && m.Body != nil:
		var t ocpi.Token
		if err := json.Unmarshal(m.Body, &t); err != nil {
			return converted{}, err
		}
		lt, loss := v211.FromToken(&t)
		return d.encode("tokens", "", lt, loss, true)
	case m.Method == http.MethodPatch && m.Body != nil:
		return d.patch(m.Body, v211.TokenPatchFrom221, "tokens", "")
	}
	return converted{ok: true}, nil
}

// session converts a session push to an eMSP: the 2.1.1 session carries its
// whole location, taken from the hub's directory. A PATCH that moves the
// session to another EVSE is sent as a PUT of the whole session.
func (d *Dialect) session(ctx context.Context, m *hub.Message) (converted, error) {
	seg := pathSegments(m.Path)
	if len(seg) != 3 || m.Body == nil {
		return converted{ok: true}, nil
	}
	if m.Method == http.MethodPatch {
		p, err := ocpi.ParseObject(m.Body)
		if err != nil {
			return converted{}, err
		}
		_, a := p["location_id"]
		_, b := p["evse_uid"]
		_, c := p["connector_id"]
		if !a && !b && !c {
			return d.patch(m.Body, func(p ocpi.Object) (ocpi.Object, v211.Loss, bool) { return v211.SessionPatchFrom221(p, nil, "", "") }, "sessions", "")
		}
		s, found, err := d.look.SessionFunc(ctx, seg[0], seg[1], seg[2])
		if err != nil || !found {
			return converted{loss: v211.Loss{"location: the session moved and the hub has no copy of it; not sent"}}, err
		}
		m.Method = http.MethodPut
		if m.Body, err = json.Marshal(s); err != nil {
			return converted{}, err
		}
	}
	var s ocpi.Session
	if err := json.Unmarshal(m.Body, &s); err != nil {
		return converted{}, err
	}
	// Without a stored location (loc nil) the session is converted
	// without its details.
	loc, _, err := d.look.LocationFunc(ctx, s.CountryCode, s.PartyID, s.LocationID)
	if err != nil {
		return converted{}, err
	}
	ls, loss, ok := v211.FromSession(&s, loc)
	return d.encode("sessions", "", ls, loss, ok)
}

// cdr converts a CDR push to an eMSP, with its location from the directory.
func (d *Dialect) cdr(ctx context.Context, body []byte) (converted, error) {
	var c ocpi.CDR
	if err := json.Unmarshal(body, &c); err != nil {
		return converted{}, err
	}
	var loc *ocpi.Location
	if c.CdrLocation != nil {
		var err error
		// Unknown: loc stays nil and the CDR goes without its details.
		if loc, _, err = d.look.LocationFunc(ctx, c.CountryCode, c.PartyID, c.CdrLocation.ID); err != nil {
			return converted{}, err
		}
	}
	lc, loss, ok := v211.FromCDR(&c, loc)
	return d.encode("cdrs", "", lc, loss, ok)
}

// encode writes a converted object v of module (at level, for a PATCH) in
// the partner's version; ok false (v has no legacy form) sends nothing.
func (d *Dialect) encode(module, level string, v any, loss v211.Loss, ok bool) (converted, error) {
	if !ok {
		return converted{loss: loss}, nil
	}
	b, err := v211.Encode(d.version, module, level, v)
	return converted{body: b, loss: loss, ok: err == nil}, err
}

// command converts a command to a CPO, whose result is to come to the
// hub's 2.1.1 callback (it posts a 2.1.1 CommandResponse), or a result
// relayed to an eMSP's callback.
func (d *Dialect) command(m *hub.Message) (converted, error) {
	if m.Body == nil || m.Method != http.MethodPost {
		return converted{ok: true}, nil
	}
	if m.Interface == ocpi.InterfaceSender {
		// A result relayed to a legacy eMSP's response_url.
		b, loss, err := v211.ResultFrom221(m.Body)
		return converted{body: b, loss: loss, ok: err == nil}, err
	}
	if d.version == v211.V20 {
		return converted{loss: v211.Loss{"commands: OCPI 2.0 has no commands; not sent"}}, nil
	}
	seg := pathSegments(m.Path)
	if len(seg) != 1 {
		return converted{ok: true}, nil
	}
	obj, err := ocpi.ParseObject(m.Body)
	if err != nil {
		return converted{}, err
	}
	if u, ok := obj["response_url"].(string); ok {
		obj["response_url"] = strings.Replace(u, "/ocpi/2.2.1/cpo/commands/", "/ocpi/"+d.version+"/cpo/commands/", 1)
	}
	body, err := ocpi.MarshalObject(obj)
	if err != nil {
		return converted{}, err
	}
	b, loss, ok, err := v211.CommandFrom221(seg[0], body)
	return converted{body: b, loss: loss, ok: ok}, err
}

// Answer implements hub.Dialect: what a legacy partner answers a forwarded
// request with is read into 2.2.1 — a location or tariff (owned by the
// party of the path), a CommandResponse, an AuthorizationInfo (with the
// token it is about, which 2.2.1 requires and the hub holds).
func (d *Dialect) Answer(ctx context.Context, m hub.Message, data json.RawMessage) (json.RawMessage, error) {
	seg := pathSegments(m.Path)
	switch {
	case m.Module == "commands" && m.Method == http.MethodPost:
		out, loss, err := v211.ResponseTo221(data, d.look.CommandWait)
		d.rec.Lost(ctx, d.version, m.Module, "answer to "+m.Path, loss)
		return out, err
	case m.Module == "tokens" && len(seg) == 2 && seg[1] == "authorize":
		return d.authorization(ctx, m, seg[0], data)
	case m.Method != http.MethodGet || len(seg) < 3:
		return data, nil
	case m.Module == "locations":
		out, loss, err := v211.LocationIn(d.version, locationLevel(m.Path), data, seg[0], seg[1], d.now())
		d.rec.Lost(ctx, d.version, m.Module, "answer "+m.Path, loss)
		return out, err
	case m.Module == "tariffs":
		return v211.TariffIn(d.version, data, seg[0], seg[1], d.now())
	}
	return data, nil
}

// authorization reads a legacy eMSP's AuthorizationInfo.
func (d *Dialect) authorization(ctx context.Context, m hub.Message, uid string, data json.RawMessage) (json.RawMessage, error) {
	var a v211.AuthorizationInfo
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, err
	}
	cc, pid, _ := strings.Cut(m.Party, "/")
	q, _ := url.ParseQuery(m.Query)
	typ := q.Get("type")
	if typ == "" {
		typ = "RFID"
	}
	tok, found, err := d.look.TokenFunc(ctx, cc, pid, uid, typ)
	if err != nil {
		return nil, err
	}
	if !found {
		// 2.2.1 needs the token in the answer; the eMSP never shared it.
		return nil, ocpi.Errorf(ocpi.EHUB, "party %s answered an authorization of token %s, which it never pushed to the hub", m.Party, uid)
	}
	out, loss := a.To221(tok)
	d.rec.Lost(ctx, d.version, m.Module, "authorization of "+uid, loss)
	return json.Marshal(out)
}

// locationLevel tells what a locations push path names:
// /CC/PID/LOC, /CC/PID/LOC/EVSE or /CC/PID/LOC/EVSE/CONNECTOR.
func locationLevel(path string) string {
	switch len(pathSegments(path)) {
	case 4:
		return v211.LevelEVSE
	case 5:
		return v211.LevelConnector
	}
	return v211.LevelLocation
}

// pathSegments splits a push path into its unescaped segments.
func pathSegments(path string) []string {
	path, _, _ = strings.Cut(path, "?")
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	seg := strings.Split(path, "/")
	for i, s := range seg {
		if u, err := url.PathUnescape(s); err == nil {
			seg[i] = u
		}
	}
	return seg
}
