// Package console is the operator's web console, served at /console:
// server-rendered HTML (html/template) with a little progressive JavaScript
// (relative times, confirmations, filters that apply on change, live
// refresh, copy buttons) and no framework or build step; templates, CSS and
// script are embedded in the binary. Every page works without JavaScript.
//
// # Signing in
//
// The operator signs in with the admin token. A session is a random id in
// an HttpOnly, SameSite=Strict cookie (Secure when the public URL is https);
// the database keeps only its SHA-256, with an idle timeout (2 h) and an
// absolute lifetime (12 h), so any replica serves any request and logging
// out ends the session everywhere. Sessions are tied to the admin token:
// replacing it signs every browser out. Every POST carries the session's
// CSRF token and must come from the console's own origin. A one-time sign-in
// link (LoginLink, valid 10 minutes) lets `ocpihub demo` open the console
// without pasting a token. Failed sign-ins are limited per client address.
//
// # Adding a page
//
// A module's pages are one Go file and one template each. The file
// (page_<module>.go) defines a method returning the module's pages and
// actions; the template (templates/<name>.html) defines "content":
//
//	// page_sessions.go
//	func (c *Console) sessionPages() ([]ui.Page, []ui.Action) {
//		if c.cfg.Sessions == nil { // the service, added to Config and wired in app
//			return nil, nil
//		}
//		return []ui.Page{{
//			Path: "/sessions", Title: "Sessions", Section: "Charging", Nav: "Sessions",
//			Template: "sessions", Refresh: 10,
//			Load: func(r *http.Request) (any, error) {
//				list, err := c.cfg.Sessions.List(r.Context(), …)
//				return sessionsView{Sessions: list, Chart: …}, err
//			},
//		}}, []ui.Action{{
//			Path: "/sessions/{id}/stop",
//			Do: func(r *http.Request) (ui.Result, error) { … return ui.Result{Redirect: "/sessions/" + id, Flash: "Stop sent"}, nil },
//		}}
//	}
//
// and adds c.sessionPages to modules() below (page_directory.go is a
// complete example: a list with a map, filters, keyset paging and a detail
// page, on the location service). Load's value is the template's
// .Data; the template reaches the shared parts with {{template "badge" …}},
// {{template "time" …}}, {{template "pager" …}}, {{template "empty" …}},
// {{template "csrf" $}} inside POST forms, {{template "map" …}} with a
// ui.MapView (ui.NewMap: points with id, name, status and OCPI coordinates) and
// {{template "chart" …}} with a ui.ChartView (ui.Chart.View: per-day bars and
// lines). Pagers come from ui.Paginate (in-memory lists) or ui.KeysetPager. A
// ui.Action answers POSTs: it runs after the CSRF check and redirects with a
// flash message (or renders a page once, for secrets). A page with Refresh
// reloads its main content every so many seconds while visible (live
// sessions). Overview cards are added in overviewCards.
//
// An area that grows large becomes its own package (paypages, webhookpages):
// it exports Pages(Config) returning its pages and actions, its Config holds
// exactly what it needs from the console, and a one-line method here wires
// it into modules(); its templates stay in templates/.
package console

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/authguard"
	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/console/paypages"
	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/console/webhookpages"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/payment"
	sessionsvc "github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/token"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// Config is what the console needs.
type Config struct {
	DB      *store.DB
	Parties *party.Service
	Jobs    *jobs.Client
	// Locations is the directory (nil: no directory pages).
	Locations *location.Service
	// Commands is the command relay (nil: no commands pages).
	Commands *command.Service
	// Sessions and CDRs are the charging records (nil: no sessions or
	// CDRs pages).
	Sessions *sessionsvc.Service
	CDRs     *cdr.Service
	// Tokens are the eMSPs' tokens (nil: no tokens page).
	Tokens *token.Service
	// UPI is QR charging paid by UPI (nil: no payments pages).
	UPI *upi.Service
	// Payments is Direct Payment through terminals (nil: no such page).
	Payments *payment.Service
	// Webhooks is the outgoing webhooks service (nil: no webhooks pages).
	Webhooks  *webhook.Service
	Clock     clock.Clock
	Logger    *slog.Logger
	PublicURL *url.URL
	// Version is the build shown in the footer.
	Version string
	// Dev shows the component gallery (map, charts, badges with sample data).
	Dev bool
	// MapTiles is an optional tile URL template ("https://tile.example/{z}/{x}/{y}.png")
	// drawn under the directory map; empty: points on a coordinate grid only,
	// which works offline.
	MapTiles string
	// MapAttribution is shown under the tiles (their licence usually asks
	// for it, e.g. "© OpenStreetMap contributors").
	MapAttribution string
	// SessionTTL is a session's absolute lifetime (default 12 h);
	// IdleTimeout ends a session not used for that long (default 2 h).
	SessionTTL  time.Duration
	IdleTimeout time.Duration
	// AuthGuard throttles wrong sign-ins per client, shared with the API
	// and across replicas (nil: no limit); TrustedProxies are the peers
	// whose X-Forwarded-For names the client.
	AuthGuard      *authguard.Guard
	TrustedProxies authguard.Proxies
	// Unencrypted is true while the hub runs without --secret-key: the
	// overview warns that partner tokens are stored as they are.
	Unencrypted bool
}

// Console serves the operator console.
type Console struct {
	cfg     Config
	logger  *slog.Logger
	clock   clock.Clock
	base    string // URL path of the console, behind the public URL's path
	secure  bool   // cookies are Secure (https public URL)
	origin  string // scheme://host of the public URL, for the origin check
	mux     *http.ServeMux
	tmpl    *templates
	nav     []navSection
	started time.Time

	mu      sync.Mutex
	touched map[string]time.Time // session last-seen writes, throttled
}

// New builds the console. It panics if the embedded templates do not parse
// (a build defect, caught by every test).
func New(cfg Config) *Console {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.PublicURL == nil {
		cfg.PublicURL = &url.URL{Scheme: "http", Host: "localhost:8080"}
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 2 * time.Hour
	}
	c := &Console{
		cfg:     cfg,
		logger:  cfg.Logger.With("component", "console"),
		clock:   cfg.Clock,
		base:    strings.TrimRight(cfg.PublicURL.Path, "/") + "/console",
		secure:  cfg.PublicURL.Scheme == "https",
		origin:  cfg.PublicURL.Scheme + "://" + cfg.PublicURL.Host,
		mux:     http.NewServeMux(),
		started: cfg.Clock.Now(),
		touched: map[string]time.Time{},
	}
	c.tmpl = mustParseTemplates(c.funcs())
	c.routes()
	return c
}

// modules lists every module's pages; a module adds one line here.
func (c *Console) modules() []func() ([]ui.Page, []ui.Action) {
	return []func() ([]ui.Page, []ui.Action){
		c.overviewPages,
		c.partyPages,
		c.directoryPages,
		c.evsePages,
		c.sessionPages,
		c.cdrPages,
		c.tokenPages,
		c.commandPages,
		c.paymentPages,
		c.webhookPages,
		c.trafficPages,
		c.invitationPages,
		c.jobPages,
		c.componentPages,
	}
}

// paymentPages is the payments area (console/paypages).
func (c *Console) paymentPages() ([]ui.Page, []ui.Action) {
	return paypages.Pages(paypages.Config{UPI: c.cfg.UPI, Payments: c.cfg.Payments,
		LinkDirectory: c.cfg.Locations != nil, LinkCommands: c.cfg.Commands != nil,
		PartyOptions: c.partyOptions, Clock: c.clock, Logger: c.logger})
}

// webhookPages is the webhooks area (console/webhookpages).
func (c *Console) webhookPages() ([]ui.Page, []ui.Action) {
	return webhookpages.Pages(webhookpages.Config{Webhooks: c.cfg.Webhooks, Logger: c.logger})
}

// sections orders the navigation.
var sections = []string{"", "Network", "Charging", "Payments", "Integrations", "Operations", "Development"}

func (c *Console) routes() {
	c.mux.Handle("GET /console/static/", c.static())
	c.mux.HandleFunc("GET /console/login", c.handleLoginForm)
	c.mux.HandleFunc("POST /console/login", c.handleLogin)
	c.mux.HandleFunc("POST /console/logout", c.handleLogout)
	var all []ui.Page
	for _, m := range c.modules() {
		pages, actions := m()
		for _, p := range pages {
			if p.Dev && !c.cfg.Dev {
				continue
			}
			c.tmpl.page(p.Template) // fail at start for a missing template
			c.mux.Handle("GET /console"+p.Path, c.signedIn(c.servePage(p)))
			if p.Path == "/{$}" {
				// The hub's router drops trailing slashes: /console/ arrives
				// as /console.
				c.mux.Handle("GET /console", c.signedIn(c.servePage(p)))
			}
			all = append(all, p)
		}
		for _, a := range actions {
			c.mux.Handle("POST /console"+a.Path, c.signedIn(c.checkCSRF(c.serveAction(a))))
		}
	}
	if c.cfg.DB != nil {
		c.mux.Handle("GET /console/traffic/export", c.signedIn(http.HandlerFunc(c.handleTrafficExport)))
	}
	c.nav = buildNav(all)
	c.mux.Handle("/console/", c.signedIn(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.renderError(w, r, http.StatusNotFound, "There is no such page in the console.")
	})))
}

// ServeHTTP implements http.Handler.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	csp := "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:" + c.tileOrigin() +
		"; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	c.mux.ServeHTTP(w, r)
}

// tileOrigin returns the origin of the map tiles for the CSP, with a
// leading space, or "".
func (c *Console) tileOrigin() string {
	if c.cfg.MapTiles == "" {
		return ""
	}
	u, err := url.Parse(strings.NewReplacer("{", "", "}", "").Replace(c.cfg.MapTiles))
	if err != nil || u.Host == "" {
		return ""
	}
	return " " + u.Scheme + "://" + u.Host
}

// URL returns the absolute URL of a console path ("/parties/3").
func (c *Console) URL(path string) string {
	u := *c.cfg.PublicURL
	u.Path = c.base + path
	return u.String()
}

// path returns the URL path of a console path, for links.
func (c *Console) path(p string) string { return c.base + p }

// Map returns the map of points with the console's tile setting.
func (c *Console) Map(points []ui.MapPoint) ui.MapView {
	return ui.NewMap(points, ui.MapOptions{TileURL: c.cfg.MapTiles, Attribution: c.cfg.MapAttribution})
}
