// Package sim holds simulated OCPI partners — a CPO, an eMSP (and, as the
// modules grow, a PTP and a payment gateway) — that are real HTTP servers on
// loopback speaking the real wire protocol. End-to-end tests, the demo and the
// benchmarks drive ocpihub through them.
//
// A Platform is the common part: versions and version details, the
// credentials handshake in both directions, token checks on every request, a
// record of every request received, and a client for calling the hub.
package sim

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// Options configure a simulated platform.
type Options struct {
	Name        string
	Role        string // CPO, EMSP, PTP, …
	CountryCode string
	PartyID     string
	// Versions offered (default 2.2.1).
	Versions []string
	// ListedVersions, when set, is what the versions endpoint lists instead
	// of Versions: a platform that speaks 2.2.1 to the hub but lists only
	// versions the hub does not share (registration 3002 tests).
	ListedVersions []string
	// RawTokens makes the platform send and expect raw (not Base64) tokens in
	// Authorization headers, like many 2.1.1 and 2.2 peers.
	RawTokens bool
	// OmitEndpoints hides modules from version details (registration 3003
	// tests).
	OmitEndpoints []string
	// RegisterBack makes the platform answer the hub's credentials POST
	// with HTTP 201 and no body, then register back by itself: POST its own
	// credentials to the hub with the token the hub sent (2.2-era CPO
	// management systems).
	RegisterBack bool
	Logger       *slog.Logger
	// Hub, when set, makes the platform another roaming hub (peerhub.go):
	// it registers with the HUB role under Hub's party and the party of
	// Role, CountryCode and PartyID stands behind it.
	Hub *PeerHubOptions
	// Clock stamps what the platform records and sends (last_updated,
	// envelope timestamps, received requests); the real clock when nil.
	Clock clock.Clock
}

// Request is a request the platform received.
type Request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	At     time.Time
	// Down is true when the platform was down and answered 503.
	Down bool
	// Handled is true once the platform has answered the request (and
	// stored what it carried).
	Handled bool
	// Abandoned is true when the caller went away while the request was
	// held (Hold): it was never handled.
	Abandoned bool
}

// Platform is a simulated OCPI platform.
type Platform struct {
	opts     Options
	addr     string
	listener net.Listener
	server   *http.Server
	mux      *http.ServeMux
	client   *ocpiclient.Client
	logger   *slog.Logger

	mu sync.Mutex
	// tokenA is a registration token we issued (hub-initiated handshake).
	tokenA string
	// tokenIn is the token the hub calls us with (we issued it); tokenOut is
	// the token we call the hub with.
	tokenIn, tokenOut string
	// hubVersions is the hub's versions URL; hubEndpoints its endpoints.
	hubVersions  string
	hubVersion   string
	hubEndpoints []ocpi.Endpoint
	endpoints    []endpoint
	requests     []Request
	// changed wakes Until and the waits for requests when one arrives,
	// is answered or is abandoned.
	changed simwire.Signal
	// Down makes the platform answer 503 to everything (an outage).
	down bool
	// silent holds every module request unanswered (SetSilent).
	silent simwire.Gate
	// delay slows every module answer (a slow partner); inFlight and
	// maxInFlight measure how many module requests overlap.
	delay                 time.Duration
	inFlight, maxInFlight int
	// holds are requests held until released (Hold).
	holds []*holdRule
	// clientInfo is what the hub pushed to our hubclientinfo receiver, by
	// ROLE/CC/PID.
	clientInfo map[string]ClientInfo
	// raw is true while tokens go raw in Authorization headers: RawTokens,
	// or a legacy version with the hub (legacy.go).
	raw bool
}

type holdRule struct {
	match   func(Request) bool
	release chan struct{}
}

type endpoint struct {
	identifier, role, path string
}

// StartAs starts a platform with one party, cc/pid in role, and the
// options tweak changes: how each role's simulator starts.
func StartAs(role, name, cc, pid string, logger *slog.Logger, tweak ...func(*Options)) (*Platform, error) {
	opts := Options{Name: name, Role: role, CountryCode: cc, PartyID: pid, Logger: logger}
	for _, t := range tweak {
		t(&opts)
	}
	return Start(opts)
}

// Start starts a platform on 127.0.0.1 with a random port.
func Start(opts Options) (*Platform, error) {
	if len(opts.Versions) == 0 {
		opts.Versions = []string{"2.2.1"}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Platform{opts: opts, listener: l, mux: http.NewServeMux(), client: ocpiclient.New(opts.Logger), logger: opts.Logger,
		clientInfo: map[string]ClientInfo{}, raw: opts.RawTokens || onlyLegacy(opts.Versions)}
	p.client.BackoffBase = 20 * time.Millisecond
	p.mux.HandleFunc("GET /ocpi/versions", p.guard(p.handleVersions, true))
	for _, v := range opts.Versions {
		v := v
		p.mux.HandleFunc("GET /ocpi/"+v, p.guard(func(w http.ResponseWriter, r *http.Request) { p.handleDetails(w, r, v) }, true))
		p.mux.HandleFunc("/ocpi/"+v+"/credentials", p.guard(func(w http.ResponseWriter, r *http.Request) { p.handleCredentials(w, r, v) }, true))
	}
	p.Handle("credentials", "SENDER", "/credentials", nil)
	// Every platform connected to a hub receives HubClientInfo (hide it with
	// OmitEndpoints: "hubclientinfo").
	p.Handle("hubclientinfo", "RECEIVER", "/clientinfo", p.handleClientInfo)
	if opts.Hub != nil {
		p.Handle("hubclientinfo", "SENDER", "/hubclientinfo", p.handleHubClientInfo)
	}
	p.addr = l.Addr().String()
	p.server = simwire.Serve(l, p.record(p.mux))
	return p, nil
}

// Handle registers a module endpoint of the platform for every version it
// speaks: path is relative to /ocpi/{version}; fn may be nil when another
// Handle call serves the path (a module listed with two roles).
func (p *Platform) Handle(identifier, role, path string, fn http.HandlerFunc) {
	p.mu.Lock()
	p.endpoints = append(p.endpoints, endpoint{identifier, role, path})
	p.mu.Unlock()
	if fn == nil {
		return
	}
	for _, v := range p.opts.Versions {
		p.mux.HandleFunc("/ocpi/"+v+path, p.guard(fn, false))
		p.mux.HandleFunc("/ocpi/"+v+path+"/", p.guard(fn, false))
	}
}

// URL returns the platform's base URL.
func (p *Platform) URL() string { return "http://" + p.addr }

// Kill stops the platform's server as a crash would: open connections are
// cut and new ones refused, until Revive. What the platform stored stays.
func (p *Platform) Kill() {
	p.mu.Lock()
	srv := p.server
	p.mu.Unlock()
	_ = srv.Close()
}

// Revive starts the killed platform again on the same address, with what it
// stored before (a partner's server restarted on its database).
func (p *Platform) Revive() error {
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.listener, p.server = l, simwire.Serve(l, p.record(p.mux))
	p.mu.Unlock()
	return nil
}

// VersionsURL returns the platform's versions URL.
func (p *Platform) VersionsURL() string { return p.URL() + "/ocpi/versions" }

// Now is the platform's time (Options.Clock).
func (p *Platform) Now() time.Time { return p.opts.Clock.Now() }

// HubVersion returns the OCPI version the platform speaks with the hub.
func (p *Platform) HubVersion() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hubVersion
}

// Name returns the platform's name.
func (p *Platform) Name() string { return p.opts.Name }

// Party returns the platform's country code and party id.
func (p *Platform) Party() (cc, pid string) { return p.opts.CountryCode, p.opts.PartyID }

// Close stops the platform.
func (p *Platform) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	p.mu.Lock()
	p.silent.Shut(false)
	for _, h := range p.holds {
		close(h.release)
	}
	p.holds = nil
	srv := p.server
	p.mu.Unlock()
	_ = srv.Shutdown(ctx)
}

// SetDown makes the platform answer every request with HTTP 503 (true) or
// serve normally again (false).
func (p *Platform) SetDown(down bool) {
	p.mu.Lock()
	p.down = down
	p.mu.Unlock()
}

// SetDelay makes every answer take d longer (a slow partner).
func (p *Platform) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// MaxInFlight returns the largest number of requests the platform handled
// at the same time.
func (p *Platform) MaxInFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.maxInFlight
}

// SetSilent makes the platform hold every module request without answering
// until SetSilent(false) (a partner that times out).
func (p *Platform) SetSilent(silent bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.silent.Shut(silent)
}

// Hold makes the platform hold every request that matches, unanswered, until
// release is called (release is idempotent). Tests use it to line requests up:
// e.g. two registrations whose callbacks both wait here have both passed the
// hub's authentication.
func (p *Platform) Hold(match func(Request) bool) (release func()) {
	h := &holdRule{match: match, release: make(chan struct{})}
	p.mu.Lock()
	p.holds = append(p.holds, h)
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if i := slices.Index(p.holds, h); i >= 0 {
				p.holds = slices.Delete(p.holds, i, i+1)
				close(h.release)
			}
		})
	}
}

func (p *Platform) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, At: p.Now()}
		p.mu.Lock()
		req.Down = p.down
		idx := len(p.requests)
		p.requests = append(p.requests, req)
		p.changed.Notify()
		down, hold := p.down, p.silent.Held()
		var held []chan struct{}
		for _, h := range p.holds {
			if h.match(req) {
				held = append(held, h.release)
			}
		}
		p.mu.Unlock()
		for _, ch := range held {
			select {
			case <-ch:
			case <-r.Context().Done():
				p.mu.Lock()
				p.requests[idx].Abandoned = true
				p.changed.Notify()
				p.mu.Unlock()
				return
			}
		}
		// handled marks the request answered and wakes waiters again, so a
		// condition on the platform's state sees its effect.
		handled := func() {
			p.mu.Lock()
			p.requests[idx].Handled = true
			p.changed.Notify()
			p.mu.Unlock()
		}
		if down {
			w.WriteHeader(http.StatusServiceUnavailable)
			handled()
			return
		}
		if !strings.HasSuffix(r.URL.Path, "/versions") && !simwire.Pass(r.Context(), hold) {
			return
		}
		p.mu.Lock()
		p.inFlight++
		p.maxInFlight = max(p.maxInFlight, p.inFlight)
		delay := p.delay
		p.mu.Unlock()
		if delay > 0 {
			// A slow partner: the answer takes this long.
			time.Sleep(delay)
		}
		next.ServeHTTP(w, r)
		p.mu.Lock()
		p.inFlight--
		p.mu.Unlock()
		handled()
	})
}

// Until waits until cond holds, checking it again after every request the
// platform handles, or until ctx ends. cond may call the platform's
// accessors (it runs without the platform's lock).
func (p *Platform) Until(ctx context.Context, cond func() bool) error {
	if err := p.changed.Wait(ctx, cond); err != nil {
		return fmt.Errorf("%s: condition not met: %w", p.opts.Name, err)
	}
	return nil
}

// guard checks the Authorization header: the token we issued to the hub (or,
// when registering is allowed, a token A we issued).
func (p *Platform) guard(fn http.HandlerFunc, registering bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		got := p.tokenFrom(r.Header.Get("Authorization"))
		p.mu.Lock()
		ok := got != "" && (got == p.tokenIn || (registering && got == p.tokenA))
		p.mu.Unlock()
		if !ok {
			p.Reply(w, http.StatusUnauthorized, 2000, nil)
			return
		}
		fn(w, r)
	}
}

// tokenFrom decodes an Authorization header the way this platform expects.
func (p *Platform) tokenFrom(h string) string {
	v, ok := strings.CutPrefix(h, "Token ")
	if !ok {
		return ""
	}
	if p.rawTokens() {
		return v
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// ReadObject decodes a request's JSON object; on a body that is not one it
// answers 400 with status 2001 and reports false.
func (p *Platform) ReadObject(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	var obj map[string]any
	if err := json.NewDecoder(r.Body).Decode(&obj); err != nil {
		p.Reply(w, http.StatusBadRequest, 2001, nil)
		return nil, false
	}
	return obj, true
}

// ReadResult reads a CommandResult POSTed to one of the platform's
// response_urls, marker/{command}/{uid}; it answers another method or
// path 404 and a body that is no JSON object 400 (false). The caller keeps
// the result and answers.
func (p *Platform) ReadResult(w http.ResponseWriter, r *http.Request, marker string) (Result, bool) {
	seg := simwire.Segments(r.URL.Path, marker)
	if r.Method != http.MethodPost || len(seg) != 2 {
		p.Reply(w, http.StatusNotFound, 2000, nil)
		return Result{}, false
	}
	obj, read := p.ReadObject(w, r)
	if !read {
		return Result{}, false
	}
	return Result{Command: seg[0], UID: seg[1], Body: obj, Header: r.Header.Clone()}, true
}

// Reply writes an OCPI envelope (the role simulators of other packages answer through it).
func (p *Platform) Reply(w http.ResponseWriter, httpStatus, code int, data any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	env := map[string]any{"status_code": code, "status_message": ocpi.StatusText(code), "timestamp": ocpi.NewDateTime(p.Now())}
	if data != nil {
		env["data"] = data
	}
	if !ocpi.IsSuccess(code) {
		// Like ocpihub itself, the simulators explain errors in an error
		// object (the envelope checks of the hub's tests expect one on every
		// error the hub passes back).
		env["error"] = map[string]any{"code": "SIMULATED_" + strconv.Itoa(code), "description": ocpi.StatusText(code)}
	}
	_ = json.NewEncoder(w).Encode(env)
}

// OK answers with a 1000 envelope.
func (p *Platform) OK(w http.ResponseWriter, data any) { p.Reply(w, http.StatusOK, 1000, data) }

// OKList answers a sender's GET with its whole list in one page: the
// list, its length in X-Total-Count and a page size of 100 in X-Limit.
func (p *Platform) OKList(w http.ResponseWriter, list []any) {
	w.Header().Set("X-Total-Count", strconv.Itoa(len(list)))
	w.Header().Set("X-Limit", "100")
	p.OK(w, list)
}

func (p *Platform) handleVersions(w http.ResponseWriter, r *http.Request) {
	listed := p.opts.Versions
	if len(p.opts.ListedVersions) > 0 {
		listed = p.opts.ListedVersions
	}
	vs := make([]ocpi.Version, 0, len(listed))
	for _, v := range listed {
		vs = append(vs, ocpi.Version{Version: v, URL: p.URL() + "/ocpi/" + v})
	}
	p.OK(w, vs)
}

func (p *Platform) handleDetails(w http.ResponseWriter, r *http.Request, v string) {
	d := ocpi.VersionDetails{Version: v}
	p.mu.Lock()
	for _, e := range p.endpoints {
		if slices.Contains(p.opts.OmitEndpoints, e.identifier) || !inVersion(v, e.identifier) {
			continue
		}
		role := e.role
		if v == "2.1.1" || v == "2.0" {
			role = ""
		}
		d.Endpoints = append(d.Endpoints, ocpi.Endpoint{Identifier: e.identifier, Role: role, URL: p.URL() + "/ocpi/" + v + e.path})
	}
	p.mu.Unlock()
	p.OK(w, d)
}

// Credentials returns the credentials object this platform presents with
// token (the token the hub is to call it with).
func (p *Platform) Credentials(token string) ocpi.Credentials {
	if h := p.opts.Hub; h != nil {
		return ocpi.Credentials{Token: token, URL: p.VersionsURL(), Roles: []ocpi.CredentialsRole{{
			Role: "HUB", CountryCode: h.CountryCode, PartyID: h.PartyID, BusinessDetails: ocpi.BusinessDetails{Name: p.opts.Name},
		}}}
	}
	return ocpi.Credentials{Token: token, URL: p.VersionsURL(), Roles: []ocpi.CredentialsRole{{
		Role: p.opts.Role, CountryCode: p.opts.CountryCode, PartyID: p.opts.PartyID,
		BusinessDetails: ocpi.BusinessDetails{Name: p.opts.Name},
	}}}
}

// handleCredentials serves the hub-initiated handshake (the hub POSTs with
// our token A) and the hub's PUT/DELETE.
func (p *Platform) handleCredentials(w http.ResponseWriter, r *http.Request, version string) {
	switch r.Method {
	case http.MethodGet:
		p.mu.Lock()
		c := p.credentialsFor(version, p.tokenIn)
		p.mu.Unlock()
		p.OK(w, c)
	case http.MethodPost, http.MethodPut:
		in, err := readCredentials(version, r.Body)
		if err != nil {
			p.Reply(w, http.StatusBadRequest, 2001, nil)
			return
		}
		// Call the hub back with the token it sent, as the spec demands.
		p.mu.Lock()
		p.tokenOut = in.Token
		p.mu.Unlock()
		if err := p.discoverHub(r.Context(), in.URL, ""); err != nil {
			p.Reply(w, http.StatusOK, 3001, nil)
			return
		}
		if p.opts.RegisterBack && r.Method == http.MethodPost {
			p.mu.Lock()
			p.tokenA = ""
			p.mu.Unlock()
			w.WriteHeader(http.StatusCreated)
			go p.registerBack(version)
			return
		}
		tok := uuid.NewString()
		p.mu.Lock()
		p.tokenIn, p.tokenA = tok, ""
		p.mu.Unlock()
		p.OK(w, p.credentialsFor(version, tok))
	case http.MethodDelete:
		p.mu.Lock()
		p.tokenIn, p.tokenOut = "", ""
		p.mu.Unlock()
		p.OK(w, nil)
	default:
		p.Reply(w, http.StatusMethodNotAllowed, 2000, nil)
	}
}

// Invite returns a token A for the hub to register with (the hub starts the
// handshake with ocpihub party connect).
func (p *Platform) Invite() string {
	tok := "A-" + uuid.NewString()
	p.mu.Lock()
	p.tokenA = tok
	p.mu.Unlock()
	return tok
}

// discoverHub reads the hub's versions and details with the current token:
// of version want, or the highest both speak when want is "".
func (p *Platform) discoverHub(ctx context.Context, versionsURL, want string) error {
	p.mu.Lock()
	auth := ocpiclient.Auth{Token: p.tokenOut, Base64: !p.raw}
	p.mu.Unlock()
	v, d, err := p.client.Discover(ctx, versionsURL, auth, p.opts.Versions, want)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.hubVersions, p.hubVersion, p.hubEndpoints = versionsURL, v.Version, d.Endpoints
	p.mu.Unlock()
	return nil
}

// Register performs the partner-initiated handshake: discovery with token A,
// a credentials POST with a new token B, and the token C from the answer is
// kept for calling the hub. A refused POST is returned as an
// *ocpiclient.Error carrying the hub's answer (StatusCode reads it).
func (p *Platform) Register(ctx context.Context, hubVersionsURL, tokenA string) error {
	return p.RegisterIn(ctx, hubVersionsURL, tokenA, "")
}

// RegisterIn is Register in a given version ("" : the highest both speak).
func (p *Platform) RegisterIn(ctx context.Context, hubVersionsURL, tokenA, version string) error {
	tokenB, err := p.begin(ctx, hubVersionsURL, tokenA, version)
	if err != nil {
		return err
	}
	var answer json.RawMessage
	resp, err := p.CallHub(ctx, http.MethodPost, "credentials", "", "", p.credentialsFor(p.HubVersion(), tokenB), &answer)
	if err != nil {
		return fmt.Errorf("credentials POST: %w (%s)", err, bodyOf(resp))
	}
	theirs, err := readCredentials(p.HubVersion(), bytes.NewReader(answer))
	if err != nil {
		return fmt.Errorf("credentials POST answer: %w", err)
	}
	p.mu.Lock()
	p.tokenOut = theirs.Token
	p.mu.Unlock()
	return nil
}

// Begin is the first half of Register: discovery of the hub with token A
// (which becomes the token we call the hub with) and a new token B that the
// platform accepts from now on. Tests that send the credentials POST
// themselves (races, malformed bodies) start with it.
func (p *Platform) Begin(ctx context.Context, hubVersionsURL, tokenA string) (tokenB string, err error) {
	return p.begin(ctx, hubVersionsURL, tokenA, "")
}

func (p *Platform) begin(ctx context.Context, hubVersionsURL, tokenA, version string) (tokenB string, err error) {
	p.mu.Lock()
	p.tokenOut = tokenA
	if version != "" {
		p.raw = p.opts.RawTokens || v211.IsLegacy(version)
	}
	p.mu.Unlock()
	if err := p.discoverHub(ctx, hubVersionsURL, version); err != nil {
		return "", fmt.Errorf("discover the hub with token A: %w", err)
	}
	tokenB = "B-" + uuid.NewString()
	p.mu.Lock()
	p.tokenIn = tokenB
	p.mu.Unlock()
	return tokenB, nil
}

// Unregister sends the hub a credentials DELETE and forgets the tokens.
func (p *Platform) Unregister(ctx context.Context) error {
	if _, err := p.CallHub(ctx, http.MethodDelete, "credentials", "", "", nil, nil); err != nil {
		return err
	}
	p.mu.Lock()
	p.tokenIn = ""
	p.mu.Unlock()
	return nil
}

// TokenIn returns the token the hub calls us with.
func (p *Platform) TokenIn() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokenIn
}

// SetOmitEndpoints replaces the modules hidden from the version details: a
// partner that starts or stops offering an interface (its next credentials
// PUT tells the hub).
func (p *Platform) SetOmitEndpoints(identifiers ...string) {
	p.mu.Lock()
	p.opts.OmitEndpoints = identifiers
	p.mu.Unlock()
}

// UpdateCredentials rotates tokens from our side: a credentials PUT with a new
// token B; the hub answers with a new token C.
func (p *Platform) UpdateCredentials(ctx context.Context) (old string, err error) {
	tokenB := "B-" + uuid.NewString()
	p.mu.Lock()
	old, oldIn := p.tokenOut, p.tokenIn
	p.tokenIn = tokenB
	p.mu.Unlock()
	var answer json.RawMessage
	if _, err := p.CallHub(ctx, http.MethodPut, "credentials", "", "", p.credentialsFor(p.HubVersion(), tokenB), &answer); err != nil {
		p.mu.Lock()
		p.tokenIn = oldIn
		p.mu.Unlock()
		return old, err
	}
	theirs, err := readCredentials(p.HubVersion(), bytes.NewReader(answer))
	if err != nil {
		return old, err
	}
	p.mu.Lock()
	p.tokenOut = theirs.Token
	p.mu.Unlock()
	return old, nil
}

// Token returns the token we call the hub with.
func (p *Platform) Token() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokenOut
}

// SetToken replaces the token we call the hub with (tests of old tokens).
func (p *Platform) SetToken(tok string) {
	p.mu.Lock()
	p.tokenOut = tok
	p.mu.Unlock()
}

// HubEndpoint returns the hub's URL for a module and interface role.
func (p *Platform) HubEndpoint(identifier, role string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return ocpi.VersionDetails{Endpoints: p.hubEndpoints}.Find(identifier, role)
}

// CallHub calls one of the hub's endpoints: module identifier with interface
// role ("" for any), plus a path suffix and query. out receives data.
func (p *Platform) CallHub(ctx context.Context, method, identifier, role, suffix string, body, out any) (*ocpiclient.Response, error) {
	u, ok := p.HubEndpoint(identifier, role)
	if !ok {
		return nil, fmt.Errorf("the hub lists no %s %s endpoint", identifier, role)
	}
	return p.Do(ctx, method, u+suffix, body, out)
}

// Do calls a hub URL with our token, without retries, and requires an OCPI
// success.
func (p *Platform) Do(ctx context.Context, method, url string, body, out any) (*ocpiclient.Response, error) {
	p.mu.Lock()
	auth := ocpiclient.Auth{Token: p.tokenOut, Base64: !p.raw}
	p.mu.Unlock()
	return p.client.Call(ctx, ocpiclient.Request{Method: method, URL: url, Token: auth.Token, Base64: auth.Base64, Body: body, MaxAttempts: 1,
		From: ocpiclient.Party{CountryCode: p.opts.CountryCode, PartyID: p.opts.PartyID}}, out)
}

// Raw calls a hub URL with our token and returns the answer whatever it is.
func (p *Platform) Raw(ctx context.Context, method, url string, body any, header http.Header) (*ocpiclient.Response, error) {
	p.mu.Lock()
	tok, raw := p.tokenOut, p.raw
	p.mu.Unlock()
	req := ocpiclient.Request{Method: method, URL: url, Token: tok, Base64: !raw, Body: body, MaxAttempts: 1}
	if p.opts.Hub != nil {
		// A hub forwards for the party behind it.
		req.From = ocpiclient.Party{CountryCode: p.opts.CountryCode, PartyID: p.opts.PartyID}
	}
	if header != nil {
		header = header.Clone()
		req.CorrelationID, req.RequestID = header.Get("X-Correlation-ID"), header.Get("X-Request-ID")
		header.Del("X-Correlation-ID")
		header.Del("X-Request-ID")
		req.Header = header
	}
	return p.client.Do(ctx, req)
}

// Requests returns the requests received so far that match (all when match
// is nil).
func (p *Platform) Requests(match func(Request) bool) []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Request
	for _, r := range p.requests {
		if match == nil || match(r) {
			out = append(out, r)
		}
	}
	return out
}

// WaitFor waits until at least n matching requests have been answered (so
// what they carried is stored and its effects are visible), or ctx ends.
func (p *Platform) WaitFor(ctx context.Context, n int, match func(Request) bool) ([]Request, error) {
	return p.WaitArrived(ctx, n, func(r Request) bool { return r.Handled && (match == nil || match(r)) })
}

// WaitArrived waits until at least n matching requests have arrived,
// answered or not (a test holding them with Hold needs this), or ctx ends.
func (p *Platform) WaitArrived(ctx context.Context, n int, match func(Request) bool) ([]Request, error) {
	var got []Request
	if err := p.changed.Wait(ctx, func() bool { got = p.Requests(match); return len(got) >= n }); err != nil {
		return p.Requests(match), errors.Join(err, fmt.Errorf("%s received %d matching requests, want %d", p.opts.Name, len(p.Requests(match)), n))
	}
	return got, nil
}

// PathHas matches requests with method whose path contains part.
func PathHas(method, part string) func(Request) bool {
	return func(r Request) bool { return (method == "" || r.Method == method) && strings.Contains(r.Path, part) }
}

// StatusCode returns the OCPI status_code of a refused call (0 when the
// answer had no envelope).
func StatusCode(err error) int {
	var e *ocpiclient.Error
	if errors.As(err, &e) && e.Response != nil && e.Response.Envelope != nil {
		return e.Response.Envelope.StatusCode
	}
	return 0
}

// HTTPStatus returns the HTTP status of a refused call (0 without one).
func HTTPStatus(err error) int {
	var e *ocpiclient.Error
	if errors.As(err, &e) && e.Response != nil {
		return e.Response.HTTPStatus
	}
	return 0
}

func bodyOf(r *ocpiclient.Response) string {
	if r == nil {
		return "no response"
	}
	return string(r.Body)
}

// serveList answers a paged sender GET from the directory (offset, limit,
// date_from; Link to the next page).
func (p *Platform) serveList(w http.ResponseWriter, r *http.Request, d *simwire.Directory) {
	q := r.URL.Query()
	from, _ := ocpi.ParseDateTime(q.Get("date_from"))
	all := d.List(from)
	offset, _ := strconv.Atoi(q.Get("offset"))
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit <= 0 || limit > 50 {
		limit = 50
	}
	end := min(offset+limit, len(all))
	page := []map[string]any{}
	if offset < len(all) {
		page = all[offset:end]
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(len(all)))
	w.Header().Set("X-Limit", "50")
	if end < len(all) {
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path}
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("offset", strconv.Itoa(end))
		nq.Set("limit", strconv.Itoa(limit))
		u.RawQuery = nq.Encode()
		w.Header().Set("Link", "<"+u.String()+">; rel=\"next\"")
	}
	p.OK(w, page)
}
