package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// AuthorizeBehavior is how the eMSP simulator answers a real-time
// authorization. The zero value answers from its own tokens: a valid one is
// ALLOWED with a new authorization_reference, an invalid one BLOCKED, an
// unknown one HTTP 404 with 2004.
type AuthorizeBehavior struct {
	// Allowed overrides the answer's allowed value.
	Allowed string
	// Unknown answers 404 / 2004.
	Unknown bool
	// Delay waits before answering; Silent never answers (the caller gives
	// up).
	Delay  time.Duration
	Silent bool
}

// Result is a command result a simulator (the eMSP, the PTP) received at a
// response_url it gave.
type Result struct {
	Command string
	UID     string
	Body    map[string]any
	Header  http.Header
}

// emspState is the eMSP simulator's tokens, sessions and commands side.
type emspState struct {
	mu          sync.Mutex
	tokens      map[string]map[string]any
	sessions    SessionBook
	cdrs        []map[string]any
	results     ResultLog
	profiles    []Result
	onAuthorize func(uid, typ string, body map[string]any) AuthorizeBehavior
	refs        int
}

// handleSessionModules adds the modules an eMSP offers for sessions, CDRs,
// command results and charging profiles.
func (e *EMSP) handleSessionModules() {
	e.st = &emspState{tokens: map[string]map[string]any{}}
	e.Handle("sessions", "RECEIVER", "/emsp/sessions", e.st.sessions.Receive(e.Platform, "/emsp/sessions", simwire.PatchSession))
	e.Handle("cdrs", "RECEIVER", "/emsp/cdrs", e.handleCDR)
	e.Handle("commands", "SENDER", "/emsp/commands", e.st.results.Receive(e.Platform, "/emsp/commands"))
	e.Handle("chargingprofiles", "SENDER", "/emsp/chargingprofiles", e.handleProfileCallback)
}

// OnAuthorize scripts the answers to real-time authorizations.
func (e *EMSP) OnAuthorize(fn func(uid, typ string, body map[string]any) AuthorizeBehavior) {
	e.st.mu.Lock()
	e.st.onAuthorize = fn
	e.st.mu.Unlock()
}

func tokenKey(uid, typ string) string {
	if typ == "" {
		typ = "RFID"
	}
	return strings.ToUpper(uid + "/" + typ)
}

// NewToken returns a valid token of this eMSP.
func (e *EMSP) NewToken(uid, typ, whitelist string) map[string]any {
	if e.legacy() {
		return e.legacyToken(uid, typ, whitelist)
	}
	return map[string]any{"country_code": e.opts.CountryCode, "party_id": e.opts.PartyID, "uid": uid, "type": typ,
		"contract_id": "C-" + uid, "issuer": e.opts.Name, "valid": true, "whitelist": whitelist,
		"last_updated": ocpi.NewDateTime(e.Now())}
}

// PutToken pushes a token to the hub's tokens RECEIVER and keeps it as the
// eMSP's own.
func (e *EMSP) PutToken(ctx context.Context, tok map[string]any) (*ocpiclient.Response, error) {
	uid, _ := tok["uid"].(string)
	typ, _ := tok["type"].(string)
	resp, err := e.tokenCall(ctx, http.MethodPut, uid, typ, tok)
	if err == nil {
		e.st.mu.Lock()
		e.st.tokens[tokenKey(uid, typ)] = simwire.Clone(tok)
		e.st.mu.Unlock()
	}
	return resp, err
}

// PatchToken pushes a token PATCH to the hub and applies it to the eMSP's
// own copy.
func (e *EMSP) PatchToken(ctx context.Context, uid, typ string, patch map[string]any) (*ocpiclient.Response, error) {
	resp, err := e.tokenCall(ctx, http.MethodPatch, uid, typ, patch)
	if err == nil {
		e.st.mu.Lock()
		if t := e.st.tokens[tokenKey(uid, typ)]; t != nil {
			for k, v := range patch {
				t[k] = v
			}
		}
		e.st.mu.Unlock()
	}
	return resp, err
}

func (e *EMSP) tokenCall(ctx context.Context, method, uid, typ string, body any) (*ocpiclient.Response, error) {
	base, found := e.HubEndpoint("tokens", "RECEIVER")
	if !found {
		return nil, fmt.Errorf("the hub lists no tokens RECEIVER")
	}
	u := base + "/" + url.PathEscape(e.opts.CountryCode) + "/" + url.PathEscape(e.opts.PartyID) + "/" + url.PathEscape(uid)
	// 2.1.1 token URLs name no type.
	if typ != "" && !e.legacy() {
		u += "?type=" + url.QueryEscape(typ)
	}
	resp, err := e.Raw(ctx, method, u, body, nil)
	return resp, ok(resp, err)
}

// serveTokens is the eMSP's tokens sender: the list of its tokens, and
// POST /{uid}/authorize.
func (e *EMSP) serveTokens(w http.ResponseWriter, r *http.Request) {
	seg := simwire.Segments(r.URL.Path, "/emsp/tokens")
	if r.Method == http.MethodPost && len(seg) == 2 && seg[1] == "authorize" {
		e.authorize(w, r, seg[0])
		return
	}
	e.st.mu.Lock()
	list := simwire.Clones(e.st.tokens)
	e.st.mu.Unlock()
	e.OKList(w, list)
}

func (e *EMSP) authorize(w http.ResponseWriter, r *http.Request, uid string) {
	typ := r.URL.Query().Get("type")
	if typ == "" {
		typ = "RFID"
	}
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	e.st.mu.Lock()
	fn := e.st.onAuthorize
	tok := simwire.Clone(e.st.tokens[tokenKey(uid, typ)])
	e.st.refs++
	ref := fmt.Sprintf("%s-AUTH-%d", e.opts.PartyID, e.st.refs)
	e.st.mu.Unlock()
	var b AuthorizeBehavior
	if fn != nil {
		b = fn(uid, typ, body)
	}
	if b.Silent {
		<-r.Context().Done()
		return
	}
	if b.Delay > 0 {
		select {
		case <-time.After(b.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if b.Unknown || (tok == nil && b.Allowed == "") {
		e.Reply(w, http.StatusNotFound, 2004, nil)
		return
	}
	if tok == nil {
		tok = e.NewToken(uid, typ, "NEVER")
	}
	allowed := b.Allowed
	if allowed == "" {
		allowed = "ALLOWED"
		if v, _ := tok["valid"].(bool); !v {
			allowed = "BLOCKED"
		}
	}
	if e.legacy() {
		e.OK(w, legacyAuthorization(allowed, body))
		return
	}
	info := map[string]any{"allowed": allowed, "token": tok}
	if allowed == "ALLOWED" {
		info["authorization_reference"] = ref
		if body != nil {
			info["location"] = body
		}
	}
	e.OK(w, info)
}

// Session returns the eMSP's copy of a session (nil if none).
func (e *EMSP) Session(cc, pid, id string) map[string]any { return e.st.sessions.Session(cc, pid, id) }

// Sessions returns how many sessions the eMSP holds.
func (e *EMSP) Sessions() int { return e.st.sessions.Len() }

// handleCDR is the eMSP's CDRs receiver: POST stores a CDR and answers with
// its URL in Location; GET of that URL returns it.
func (e *EMSP) handleCDR(w http.ResponseWriter, r *http.Request) {
	seg := simwire.Segments(r.URL.Path, "/emsp/cdrs")
	e.st.mu.Lock()
	defer e.st.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && len(seg) == 0:
		obj, read := e.ReadObject(w, r)
		if !read {
			return
		}
		e.st.cdrs = append(e.st.cdrs, obj)
		w.Header().Set("Location", fmt.Sprintf("%s/ocpi/2.2.1/emsp/cdrs/%d", e.URL(), len(e.st.cdrs)))
		e.Reply(w, http.StatusCreated, 1000, nil)
	case r.Method == http.MethodGet && len(seg) == 1:
		var n int
		if _, err := fmt.Sscan(seg[0], &n); err != nil || n < 1 || n > len(e.st.cdrs) {
			e.Reply(w, http.StatusNotFound, 2000, nil)
			return
		}
		e.OK(w, e.st.cdrs[n-1])
	default:
		e.Reply(w, http.StatusNotFound, 2000, nil)
	}
}

// CDRs returns the CDRs the eMSP received, in order.
func (e *EMSP) CDRs() []map[string]any {
	e.st.mu.Lock()
	defer e.st.mu.Unlock()
	return simwire.CloneList(e.st.cdrs)
}

// SendCommand posts a command to the hub's commands RECEIVER with a fresh
// response_url of this eMSP; it returns that url's uid (Results, WaitResult
// find the result by it) and the hub's answer.
func (e *EMSP) SendCommand(ctx context.Context, command string, body map[string]any, header http.Header) (string, *ocpiclient.Response, error) {
	base, found := e.HubEndpoint("commands", "RECEIVER")
	if !found {
		return "", nil, fmt.Errorf("the hub lists no commands RECEIVER")
	}
	uid := uuid.NewString()
	b := simwire.Clone(body)
	if b == nil {
		b = map[string]any{}
	}
	version := e.HubVersion()
	if version == "" {
		version = "2.2.1"
	}
	b["response_url"] = e.URL() + "/ocpi/" + version + "/emsp/commands/" + command + "/" + uid
	resp, err := e.Raw(ctx, http.MethodPost, base+"/"+command, b, header)
	return uid, resp, err
}

// Results returns the command results received for a response_url uid
// ("" for all).
func (e *EMSP) Results(uid string) []Result { return e.st.results.For(uid) }

// WaitResult waits until a result for uid has arrived and returns its
// result value.
func (e *EMSP) WaitResult(ctx context.Context, uid string) (string, error) {
	_, err := e.WaitFor(ctx, 1, func(Request) bool { return len(e.Results(uid)) > 0 })
	if err != nil {
		return "", err
	}
	res, _ := e.Results(uid)[0].Body["result"].(string)
	return res, nil
}

// ProfileCallbacks returns the charging profile results and
// ActiveChargingProfile updates received.
func (e *EMSP) ProfileCallbacks() []Result {
	e.st.mu.Lock()
	defer e.st.mu.Unlock()
	return append([]Result(nil), e.st.profiles...)
}

// handleProfileCallback records charging profile results (POST to a
// response_url) and ActiveChargingProfile updates (PUT /{session_id}).
func (e *EMSP) handleProfileCallback(w http.ResponseWriter, r *http.Request) {
	seg := simwire.Segments(r.URL.Path, "/emsp/chargingprofiles")
	obj, read := e.ReadObject(w, r)
	if !read {
		return
	}
	e.st.mu.Lock()
	e.st.profiles = append(e.st.profiles, Result{Command: r.Method, UID: strings.Join(seg, "/"), Body: obj, Header: r.Header.Clone()})
	e.st.mu.Unlock()
	e.OK(w, nil)
}

// ProfileURL returns a fresh response_url for a charging profile request.
func (e *EMSP) ProfileURL() (uid, responseURL string) {
	uid = uuid.NewString()
	return uid, e.URL() + "/ocpi/2.2.1/emsp/chargingprofiles/results/" + uid
}
