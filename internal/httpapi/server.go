// Package httpapi is ocpihub's HTTP surface: one route table on
// net/http.ServeMux assembled from the route rows of every module, the
// middleware every request passes (ids, body cap, panic recovery, access
// log, metrics, authentication, rate limits, idempotent replays), and the
// handlers of the core modules (versions, credentials, hub client info,
// peering, locations and tariffs). The other modules declare their rows
// and handlers in the packages below it: charging (tokens to Direct
// Payment), upiapi, legacyapi (2.1.1 and 2.0), admin (the operator's API,
// webhooks, traffic) and pages (the driver's pages). Handlers decode,
// check access, call one domain service and answer with an OCPI envelope
// through package kit; package route declares the row types.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/authguard"
	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/idempotency"
	"github.com/ocpihub/ocpihub/internal/legacy"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/payment"
	"github.com/ocpihub/ocpihub/internal/ratelimit"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/tariff"
	"github.com/ocpihub/ocpihub/internal/token"
	"github.com/ocpihub/ocpihub/internal/tracing"
	"github.com/ocpihub/ocpihub/internal/traffic"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// DefaultVersion is the OCPI version of the unversioned aliases.
const DefaultVersion = "2.2.1"

// DefaultMaxBodyBytes caps request bodies (gaps.md §12).
const DefaultMaxBodyBytes = 1 << 20

// Authenticator resolves the tokens of an Authorization header to a caller.
// It returns an EUNAUTHORIZED error when none of them is known.
type Authenticator interface {
	Authenticate(ctx context.Context, tokens []string) (*party.Caller, error)
}

// Config assembles a Server.
type Config struct {
	// PublicURL is the base URL partners reach us at; it prefixes every URL we
	// advertise (versions, endpoints, Link headers).
	PublicURL    *url.URL
	MaxBodyBytes int64
	Logger       *slog.Logger
	Clock        clock.Clock
	Registry     *prometheus.Registry
	DB           *store.DB
	Auth         Authenticator
	Parties      *party.Service
	// Hub routes requests addressed to other parties; Locations and Tariffs
	// serve the CPO receivers and the eMSP directory.
	Hub       *hub.Hub
	Locations *location.Service
	Tariffs   *tariff.Service
	// UPI serves QR charging: the PG webhook, the operator's API and the
	// driver's pages.
	UPI *upi.Service
	// Tokens, Sessions, CDRs and Commands serve the tokens, sessions, CDRs,
	// commands and charging profiles modules.
	Tokens   *token.Service
	Sessions *session.Service
	CDRs     *cdr.Service
	Commands *command.Service
	// Payments serves Direct Payment: terminals and financial advice
	// confirmations, and PTPs' pre-authorised sessions.
	Payments *payment.Service
	// Version is the build's version, shown in the OpenAPI document.
	Version string
	// Console, when set, serves the operator console under /console/.
	Console http.Handler
	// Legacy announces the deprecation of 2.1.1 and 2.0; LegacyRecorder
	// counts their traffic and logs what conversions drop.
	Legacy         LegacyConfig
	LegacyRecorder *legacy.Recorder
	// Sandbox marks the sandbox instance: version details carry
	// SandboxBanner, and no request is rate limited.
	Sandbox       bool
	SandboxBanner string
	// SandboxParties, on a production hub with a sandbox, is the sandbox's
	// registry: invitations asked for with "sandbox": true are issued there.
	SandboxParties *party.Service
	// Webhooks serves the webhook subscriptions API.
	Webhooks *webhook.Service
	// RateLimiter limits the requests of each token (nil: no limits).
	RateLimiter *ratelimit.Limiter
	// AuthGuard throttles failed authentication per client (nil: none);
	// TrustedProxies are the peers whose X-Forwarded-For names the client.
	AuthGuard      *authguard.Guard
	TrustedProxies authguard.Proxies
	// MetricsToken, when set, is required to read /metrics (Bearer);
	// MetricsElsewhere removes /metrics from this server (it is served on
	// its own address).
	MetricsToken     string
	MetricsElsewhere bool
	// Idempotency stores answers to repeated write requests (nil: none).
	Idempotency *idempotency.Store
	// ResetSandboxFunc, on a sandbox, wipes its data now (the admin API's
	// reset).
	ResetSandboxFunc func(ctx context.Context) error
	// Traffic records every OCPI exchange (while Recording) and serves the
	// traffic inspector's routes.
	Traffic *traffic.Recorder
}

// Server serves the hub's HTTP API.
type Server struct {
	cfg     Config
	logger  *slog.Logger
	clock   clock.Clock
	mux     *http.ServeMux
	handler http.Handler
	metrics *httpMetrics
	// metricsHandler serves /metrics on this address.
	metricsHandler http.Handler
	// draining is set when shutdown begins: /readyz turns 503 so a load
	// balancer stops sending new requests.
	draining atomic.Bool
	// routeList lists every row served, in the order they were registered
	// (Routes).
	routeList []route.Row
	// kit answers for the handlers: here and in the module packages.
	kit *kit.Kit
	apiDocCache
}

// Route is one route of the table as tests see it: its ServeMux pattern
// ("METHOD /path/{wildcard}"), who may call it, and the rest of its row.
type Route struct {
	Pattern string
	// Access is "public", "registering" (token A too), "platform" (a
	// registered partner), "subscriber" or "admin".
	Access string
	Listed route.Listing
	Doc    route.Doc
	Schema *route.DataSchema
}

// Routes returns the route table: the OCPI, admin and operations routes
// (not the console's pages). Tests walk it to hold every route to the access
// rules (a suspended platform gets 401 on
// every functional route, token A only reaches versions and credentials).
func (s *Server) Routes() []Route { return routesOf(s.routeList) }

// routesOf returns rows as tests see them.
func routesOf(rows []route.Row) []Route {
	out := make([]Route, len(rows))
	for i, r := range rows {
		out[i] = Route{Pattern: r.Pattern, Access: r.Access.String(), Listed: r.Listed, Doc: r.Doc, Schema: r.Schema}
	}
	return out
}

// New builds a Server. Services it needs are in cfg.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.PublicURL == nil {
		cfg.PublicURL = &url.URL{Scheme: "http", Host: "localhost:8080"}
	}
	if cfg.Legacy.Deprecated.IsZero() {
		cfg.Legacy.Deprecated = DefaultLegacyDeprecated
	}
	s := &Server{cfg: cfg, logger: cfg.Logger, clock: cfg.Clock, mux: http.NewServeMux(),
		kit: &kit.Kit{Clock: cfg.Clock, Logger: cfg.Logger, Hub: cfg.Hub, Base: cfg.PublicURL}}
	s.metrics = newHTTPMetrics(cfg.Registry)
	s.metricsHandler = s.metricsRoute()
	s.routes()
	s.handler = s.hsts(withIDs(s.recordTraffic(aliases(s.deprecation(s.observe(s.recoverPanics(s.limitBody(s.mux))))))))
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Drain marks the server as shutting down.
func (s *Server) Drain() { s.draining.Store(true) }

// add registers a row: a plain handler as it is, an OCPI handler behind
// authentication, the rate limit of the caller's token, and idempotent
// replays of write requests.
func (s *Server) add(row route.Row) {
	if row.Plain == nil && row.Handler == nil {
		panic("httpapi: route " + row.Pattern + " has no handler")
	}
	s.routeList = append(s.routeList, row)
	if row.Plain != nil {
		s.mux.Handle(row.Pattern, row.Plain)
		return
	}
	var rt route.Options
	for _, o := range row.Options {
		o(&rt)
	}
	a, fn := row.Access, row.Handler
	s.mux.Handle(row.Pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a != route.Public {
			caller, err := s.guardedAuthenticate(w, r, a)
			s.countLegacy(r, caller)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			noteCaller(r.Context(), caller)
			tracing.NotePartner(r.Context(), caller.Name)
			r = r.WithContext(party.WithCaller(r.Context(), caller))
			if err := s.rateLimit(w, r, caller); err != nil {
				s.writeError(w, r, err)
				return
			}
			if a == route.Platform {
				if err := s.checkRoutingTo(r); err != nil {
					s.writeError(w, r, err)
					return
				}
			}
		}
		if err := s.serveIdempotent(w, r, a, rt, fn); err != nil {
			s.writeError(w, r, err)
		}
	}))
}

// authenticate resolves the caller and checks it may use a route of access a.
func (s *Server) authenticate(r *http.Request, a route.Access) (*party.Caller, error) {
	tokens, err := ocpi.TokenCandidates(r.Header.Get("Authorization"))
	if err != nil {
		return nil, &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: err.Error()}
	}
	if s.cfg.Auth == nil {
		return nil, &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: "unknown token"}
	}
	c, err := s.cfg.Auth.Authenticate(r.Context(), tokens)
	if ocpi.ErrorCode(err) == ocpi.EUNAUTHORIZED {
		return nil, unknownToken{err}
	}
	if err != nil {
		// The registry could not be read (its database away): a server
		// error, which the guard does not count as a guess.
		return nil, err
	}
	// Suspended and unregistered platforms never get this far: Authenticate
	// refuses their tokens on every route.
	switch {
	case a == route.Admin && c.Kind != party.CallerAdmin:
		return nil, &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: "this endpoint needs the admin token"}
	case a == route.Platform && c.Kind == party.CallerRegistering:
		return nil, &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: "a registration token (token A) reaches only versions and credentials; register first"}
	case a == route.Platform && c.Kind != party.CallerPlatform:
		// The admin token is not a partner: it owns no party, and functional
		// handlers must never see a caller without parties.
		return nil, &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: "this endpoint needs a partner's credentials token"}
	case a == route.Subscriber && c.Kind == party.CallerRegistering:
		return nil, &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: "a registration token (token A) reaches only versions and credentials; register first"}
	case (a == route.Platform || a == route.Subscriber) && c.Kind == party.CallerPlatform && c.Status != party.StatusConnected:
		return nil, &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: "the platform is " + string(c.Status) + "; finish the registration first"}
	}
	return c, nil
}
