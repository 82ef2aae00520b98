// Package pages serves the driver's pages of UPI QR charging: the landing
// page of a sticker, the status page of an order, and receipts. They are
// public, HTML (JSON for the small endpoints their scripts poll), never
// cached, and not API operations (they are not in the route table's rows).
package pages

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/ratelimit"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/orders"
)

//go:embed *.html
var pageFS embed.FS

// pageTemplates are the driver's pages, each a layout with its content.
type pageTemplates map[string]*template.Template

func parsePages() pageTemplates {
	out := pageTemplates{}
	for _, name := range []string{"landing", "status", "receipt", "message"} {
		out[name] = template.Must(template.ParseFS(pageFS, "layout.html", name+".html"))
	}
	return out
}

// Config is what the pages need.
type Config struct {
	UPI *upi.Service
	// RateLimiter limits the orders placed on one QR code (nil: no limits);
	// the sandbox is not limited.
	RateLimiter *ratelimit.Limiter
	Sandbox     bool
	Clock       clock.Clock
	Logger      *slog.Logger
}

// Server serves the driver's pages.
type Server struct {
	cfg    Config
	clock  clock.Clock
	logger *slog.Logger
	pages  pageTemplates
}

// Register adds the driver's pages to mux.
func Register(mux *http.ServeMux, cfg Config) {
	s := &Server{cfg: cfg, clock: cfg.Clock, logger: cfg.Logger, pages: parsePages()}
	s.register(mux)
}

func (s *Server) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /qr/{qr_ref}", s.pageLanding)
	mux.HandleFunc("POST /qr/{qr_ref}", s.pageOrder)
	mux.HandleFunc("GET /qr/{qr_ref}/connector", s.pageConnectorJSON)
	mux.HandleFunc("GET /pay/{order_id}", s.pageStatus)
	mux.HandleFunc("GET /pay/{order_id}/status", s.pageStatusJSON)
	mux.HandleFunc("GET /pay/{order_id}/qr.png", s.pagePayQR)
	mux.HandleFunc("GET /receipts/{receipt}", s.pageReceipt)
	mux.HandleFunc("GET /r/{code}", s.pageShortReceipt)
}

// render writes a page; title is its <title>.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, data map[string]any) {
	// Only the page's own scripts run: each carries this page's nonce.
	nonce := newNonce()
	data["Nonce"] = nonce
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		s.logger.ErrorContext(r.Context(), "page failed", "page", name, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// Order and receipt URLs are secrets: never leak them in a Referer.
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'unsafe-inline'; script-src 'self' 'nonce-"+nonce+"'; form-action 'self'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// pageError answers a page request that failed: not found, refused or
// broken, as a page people can read.
func (s *Server) pageError(w http.ResponseWriter, r *http.Request, err error) {
	status, title, msg := http.StatusInternalServerError, "Something went wrong", "Please try again in a moment."
	var oe *ocpi.Error
	switch {
	case ocpi.IsNotFound(err):
		status, title, msg = http.StatusNotFound, "Not found", "This code or link is not known. Check that you scanned the code on the charger."
	case errors.As(err, &oe) && oe.Code == ocpi.EUNAVAILABLE:
		status, title, msg = http.StatusServiceUnavailable, "Not available right now", oe.Message
	case errors.As(err, &oe) && oe.Code == ocpi.EINVALID:
		status, title, msg = http.StatusBadRequest, "Cannot do that", oe.Message
	default:
		s.logger.ErrorContext(r.Context(), "page failed", "path", r.URL.Path, "error", err)
	}
	s.render(w, r, status, "message", map[string]any{"Title": title, "Message": msg})
}

func (s *Server) pageLanding(w http.ResponseWriter, r *http.Request) {
	l, err := s.cfg.UPI.Landing(r.Context(), r.PathValue("qr_ref"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "landing", s.landingData(l, nil))
}

func landingTitle(l *orders.Landing) string {
	if l.Connector != nil && l.Connector.LocationName != "" {
		return "Charge at " + l.Connector.LocationName
	}
	return "Charge with UPI"
}

// pageOrder takes the landing page's form: a preset amount or a custom
// one, and an optional e-mail. A good choice creates the order and goes to
// its status page (303); a bad one shows the form again with the error.
func (s *Server) pageOrder(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("qr_ref")
	if err := r.ParseForm(); err != nil {
		s.pageError(w, r, ocpi.Invalid("body", "is not a form"))
		return
	}
	custom := strings.TrimSpace(r.PostForm.Get("custom"))
	email := strings.TrimSpace(r.PostForm.Get("email"))
	amount := custom
	if amount == "" {
		amount = r.PostForm.Get("amount")
	}
	tooMany := func(wait int, msg string) {
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		s.renderLandingError(w, r, ref, http.StatusTooManyRequests, custom, email, fmt.Sprintf(msg, wait))
	}
	fail := func(msg string) {
		// Invalid requests spend their own budget, never the valid
		// orders' one: a script posting garbage cannot block the charger.
		if wait, ok := s.allowOrder(r, "upi-invalid:"+ref, invalidOrderLimits); !ok {
			tooMany(wait, "Too many unusable requests were sent for this charger just now. Please try again in %d seconds.")
			return
		}
		s.renderLandingError(w, r, ref, http.StatusUnprocessableEntity, custom, email, msg)
	}
	paise, err := pg.ParseRupees(amount)
	if err != nil || amount == "" {
		fail("Choose an amount, or enter one in rupees (for example 250 or 250.50).")
		return
	}
	var limited orderLimited
	o, err := s.cfg.UPI.CreateOrder(r.Context(), orders.Request{QRRef: ref, Paise: paise, Email: email,
		Phone: r.PostForm.Get("phone"), PhoneConsent: r.PostForm.Get("phone_consent") != "", Admit: func() error {
			if wait, ok := s.allowOrder(r, "upi-order:"+ref, orderLimits); !ok {
				return orderLimited{wait}
			}
			return nil
		}})
	var oe *ocpi.Error
	switch {
	case err == nil:
	case errors.As(err, &limited):
		tooMany(limited.wait, "Too many payments were started on this charger just now. Please try again in %d seconds.")
		return
	case errors.As(err, &oe) && oe.Code == ocpi.EINVALID:
		fail(strings.TrimPrefix(oe.Message, "invalid "))
		return
	default:
		s.pageError(w, r, err)
		return
	}
	http.Redirect(w, r, "/pay/"+o.ID, http.StatusSeeOther)
}

// renderLandingError shows the landing page again with msg and what the
// driver typed.
func (s *Server) renderLandingError(w http.ResponseWriter, r *http.Request, ref string, status int, custom, email, msg string) {
	l, err := s.cfg.UPI.Landing(r.Context(), ref)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	d := s.landingData(l, r.PostForm)
	d["Error"], d["Custom"], d["Email"] = msg, custom, email
	s.render(w, r, status, "landing", d)
}

// landingData is what the landing page shows; form, when the page comes
// back with an error, is what the driver typed.
func (s *Server) landingData(l *orders.Landing, form url.Values) map[string]any {
	d := map[string]any{"Title": landingTitle(l), "Landing": l, "SMS": s.cfg.UPI.SMSEnabled(),
		"RetentionDays": int(s.cfg.UPI.Settings().PhoneRetention.Hours() / 24)}
	if form != nil {
		d["Phone"], d["PhoneConsent"] = strings.TrimSpace(form.Get("phone")), form.Get("phone_consent") != ""
	}
	return d
}

// orderLimits bound the orders started from one QR code. Every order costs
// two calls to the payment gateway (an order and a UPI QR code), which
// limits the hub's own account there; a script posting to one sticker's
// landing page must not exhaust it. One connector sees a few drivers an
// hour, each perhaps retrying once or twice, so these leave honest drivers
// untouched. The limit is per QR code rather than per client address
// because the hub usually sits behind a load balancer, where every driver
// arrives from the same address.
// Only valid orders count (the check runs after validation, through
// OrderRequest.Admit); invalid requests have their own, larger budget,
// invalidOrderLimits, which refuses only them.
var orderLimits = ratelimit.Limits{PerMinute: 10, PerHour: 60}

// invalidOrderLimits bound the invalid order requests on one QR code (a
// wrong amount, a connector not available): typing mistakes are free, a
// flood is refused without touching the valid orders' budget.
var invalidOrderLimits = ratelimit.Limits{PerMinute: 30, PerHour: 300}

// orderLimited refuses an order over the per-QR limit.
type orderLimited struct{ wait int }

func (o orderLimited) Error() string { return "too many orders on this QR code" }

// allowOrder counts a request under key; when over limits it returns false
// and the seconds to wait. A failing counter store lets the order through,
// as for the API.
func (s *Server) allowOrder(r *http.Request, key string, limits ratelimit.Limits) (wait int, ok bool) {
	l := s.cfg.RateLimiter
	if l == nil || s.cfg.Sandbox {
		return 0, true
	}
	d, err := l.Allow(r.Context(), key, limits)
	if err != nil {
		s.logger.WarnContext(r.Context(), "order rate limit check failed; order let through", "error", err)
		return 0, true
	}
	if d.Allowed {
		return 0, true
	}
	return max(int(d.RetryAfter(s.clock.Now()).Seconds()), 1), false
}

// pageConnectorJSON is the landing page's live view of the connector.
func (s *Server) pageConnectorJSON(w http.ResponseWriter, r *http.Request) {
	l, err := s.cfg.UPI.Landing(r.Context(), r.PathValue("qr_ref"))
	if err != nil {
		s.pageJSONError(w, r, err)
		return
	}
	status := ""
	if l.Connector != nil {
		status = l.Connector.Status
	}
	pageJSON(w, map[string]any{"status": status, "available": l.Refusal == "", "refusal": l.Refusal})
}

// orderStatus reads the order the path names and its status, for the
// status page and its poll.
func (s *Server) orderStatus(r *http.Request) (*orders.Order, *upi.OrderStatus, error) {
	o, err := s.cfg.UPI.Order(r.Context(), r.PathValue("order_id"))
	if err != nil {
		return nil, nil, err
	}
	st, err := s.cfg.UPI.OrderStatus(r.Context(), o)
	return o, st, err
}

func (s *Server) pageStatus(w http.ResponseWriter, r *http.Request) {
	o, st, err := s.orderStatus(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	data := map[string]any{"Title": st.Title, "Order": o, "Status": st, "Where": o.QRRef}
	if l, err := s.cfg.UPI.Landing(r.Context(), o.QRRef); err == nil && l.Connector != nil {
		data["Where"] = strings.TrimSpace(l.Connector.LocationName + " · " + l.Connector.Label())
	}
	// html/template refuses schemes it does not know; these come from the
	// PG and are checked here.
	if strings.HasPrefix(o.Intent, "upi://") {
		data["Intent"] = template.URL(o.Intent)
	}
	if strings.HasPrefix(o.QRImageURL, "https://") || strings.HasPrefix(o.QRImageURL, "http://") {
		data["CheckoutURL"] = template.URL(o.QRImageURL)
	}
	data["HasQR"] = o.Intent != "" && s.cfg.UPI.CanDrawQR(r.Context())
	s.render(w, r, http.StatusOK, "status", data)
}

// pageStatusJSON is what the status page polls.
func (s *Server) pageStatusJSON(w http.ResponseWriter, r *http.Request) {
	_, st, err := s.orderStatus(r)
	if err != nil {
		s.pageJSONError(w, r, err)
		return
	}
	pageJSON(w, st)
}

// pagePayQR draws the order's UPI intent as a QR code, for desktops.
func (s *Server) pagePayQR(w http.ResponseWriter, r *http.Request) {
	o, err := s.cfg.UPI.Order(r.Context(), r.PathValue("order_id"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	png, err := s.cfg.UPI.IntentQR(r.Context(), o)
	if err != nil {
		s.logger.WarnContext(r.Context(), "UPI QR not drawn", "error", err)
		http.Error(w, "no QR code", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "private, max-age=900")
	w.Header().Set("Content-Length", strconv.Itoa(len(png)))
	_, _ = w.Write(png)
}

// pageReceipt serves a receipt: /receipts/{id} as a page, /receipts/{id}.pdf
// as a PDF download.
func (s *Server) pageReceipt(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("receipt")
	if id, ok := strings.CutSuffix(name, ".pdf"); ok {
		pdf, err := s.cfg.UPI.ReceiptPDF(r.Context(), id)
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `attachment; filename="receipt-`+id[:8]+`.pdf"`)
		w.Header().Set("Cache-Control", "private, no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Content-Length", strconv.Itoa(len(pdf)))
		_, _ = w.Write(pdf)
		return
	}
	rc, err := s.cfg.UPI.Receipt(r.Context(), name)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "receipt", map[string]any{"Title": "Receipt " + rc.Display(rc.Amount), "Receipt": rc,
		"Local": func(d ocpi.DateTime) string { return localTime(d.Time, rc.Currency) }})
}

// pageShortReceipt follows a receipt's short link (the one its SMS
// carries) to the receipt.
func (s *Server) pageShortReceipt(w http.ResponseWriter, r *http.Request) {
	id, err := s.cfg.UPI.ReceiptByShortCode(r.Context(), r.PathValue("code"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	http.Redirect(w, r, "/receipts/"+id, http.StatusSeeOther)
}

// localTime writes a time for a receipt: Indian Standard Time for rupees,
// UTC otherwise.
func localTime(t time.Time, currency string) string {
	if t.IsZero() {
		return ""
	}
	if currency == pg.CurrencyINR {
		return t.In(time.FixedZone("IST", 5*3600+1800)).Format("2 Jan 2006, 15:04 IST")
	}
	return t.UTC().Format("2 Jan 2006, 15:04 UTC")
}

func pageJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	_, _ = w.Write(b)
}

func (s *Server) pageJSONError(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	if ocpi.IsNotFound(err) {
		status = http.StatusNotFound
	} else {
		s.logger.ErrorContext(r.Context(), "page data failed", "path", r.URL.Path, "error", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"error":"` + http.StatusText(status) + `"}`))
}

// newNonce returns a fresh CSP nonce for one page (URL-safe base64: the
// templates write it into an attribute unescaped).
func newNonce() string {
	var b [18]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
