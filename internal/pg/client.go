package pg

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
)

// DefaultTimeout bounds one call to the PG when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// maxResponse caps how much of a PG answer we read.
const maxResponse = 1 << 20

// Client is a Gateway over a Razorpay-compatible HTTP API: key id and
// secret as HTTP basic auth, JSON bodies, amounts in paise. It makes one
// attempt per call (no retries), bounds each by a timeout, and never logs
// the key secret or the Authorization header.
type Client struct {
	base      *url.URL
	keyID     string
	keySecret string
	http      *http.Client
	timeout   time.Duration
	logger    *slog.Logger
	clock     clock.Clock
	verifier  *Verifier
}

var _ Gateway = (*Client)(nil)

// NewClient returns a client for the PG at cfg.BaseURL (e.g.
// https://api.razorpay.com; the /v1 paths are added).
func NewClient(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		return nil, ErrNotConfigured
	}
	u, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pg: base URL %q must be an absolute http(s) URL", cfg.BaseURL)
	}
	if cfg.KeyID == "" || cfg.KeySecret == "" {
		return nil, errors.New("pg: the key id and key secret are required (--pg-key-id, --pg-key-secret)")
	}
	c := &Client{base: u, keyID: cfg.KeyID, keySecret: cfg.KeySecret, http: cfg.HTTPClient, timeout: cfg.Timeout, logger: cfg.Logger, clock: cfg.Clock}
	if c.http == nil {
		dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
		tr := &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         dialer.DialContext,
			TLSHandshakeTimeout: 5 * time.Second,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
		}
		if cfg.Guard != nil {
			// A proxy would resolve the name where the guard cannot see
			// the address.
			tr.Proxy, tr.DialContext = nil, cfg.Guard.Dial(dialer)
		}
		c.http = &http.Client{Transport: tr}
	}
	// Redirects would resend the credentials elsewhere; a PG API never
	// redirects.
	hc := *c.http
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.http = &hc
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if c.clock == nil {
		c.clock = clock.Real{}
	}
	c.verifier = NewVerifier(cfg.Webhook(), c.clock)
	return c, nil
}

// WrapTransport wraps the transport of the client's calls (tracing: a
// span per call). Call it before the client is used.
func (c *Client) WrapTransport(wrap func(http.RoundTripper) http.RoundTripper) {
	hc := *c.http
	hc.Transport = wrap(hc.Transport)
	c.http = &hc
}

// BaseURL returns the PG's base URL.
func (c *Client) BaseURL() string { return c.base.String() }

// CreateOrder implements Gateway: POST /v1/orders.
func (c *Client) CreateOrder(ctx context.Context, req OrderRequest) (*Order, error) {
	const op = "create order"
	if err := checkAmount(op, req.Amount); err != nil {
		return nil, err
	}
	if len(req.Receipt) > 40 {
		return nil, invalid(op, "receipt", "at most 40 characters")
	}
	if err := checkNotes(op, req.Notes); err != nil {
		return nil, err
	}
	body := map[string]any{"amount": req.Amount.Paise, "currency": req.Amount.Currency}
	if req.Receipt != "" {
		body["receipt"] = req.Receipt
	}
	if len(req.Notes) > 0 {
		body["notes"] = req.Notes
	}
	var o rzpOrder
	if err := c.do(ctx, op, http.MethodPost, "/v1/orders", body, nil, &o); err != nil {
		return nil, err
	}
	return decoded(op, o.domain)
}

// FetchOrder implements Gateway: GET /v1/orders/{id}.
func (c *Client) FetchOrder(ctx context.Context, orderID string) (*Order, error) {
	return fetch(ctx, c, "fetch order", "/v1/orders/", orderID, rzpOrder.domain)
}

// CreateUPIQR implements Gateway: POST /v1/payments/qr_codes with type
// upi_qr, single use, fixed amount; the order id travels in the notes.
func (c *Client) CreateUPIQR(ctx context.Context, req QRRequest) (*QR, error) {
	const op = "create UPI QR"
	if err := checkID(op, req.OrderID); err != nil {
		return nil, err
	}
	if err := checkAmount(op, req.Amount); err != nil {
		return nil, err
	}
	n, err := notesWith(op, req.Notes, "order_id", req.OrderID)
	if err != nil {
		return nil, err
	}
	body := map[string]any{
		"type": "upi_qr", "usage": "single_use", "fixed_amount": true,
		"payment_amount": req.Amount.Paise, "notes": n,
	}
	if req.Name != "" {
		body["name"] = req.Name
	}
	if req.Description != "" {
		body["description"] = req.Description
	}
	if !req.CloseBy.IsZero() {
		body["close_by"] = req.CloseBy.Unix()
	}
	var q rzpQR
	if err := c.do(ctx, op, http.MethodPost, "/v1/payments/qr_codes", body, nil, &q); err != nil {
		return nil, err
	}
	return decoded(op, func() (*QR, error) { return q.domain(req.Amount.Currency) })
}

// FetchPayment implements Gateway: GET /v1/payments/{id}.
func (c *Client) FetchPayment(ctx context.Context, paymentID string) (*Payment, error) {
	return fetch(ctx, c, "fetch payment", "/v1/payments/", paymentID, rzpPayment.domain)
}

// OrderPayments implements Gateway: GET /v1/orders/{id}/payments.
func (c *Client) OrderPayments(ctx context.Context, orderID string) ([]Payment, error) {
	const op = "fetch order payments"
	if err := checkID(op, orderID); err != nil {
		return nil, err
	}
	var col rzpCollection[rzpPayment]
	if err := c.do(ctx, op, http.MethodGet, "/v1/orders/"+url.PathEscape(orderID)+"/payments", nil, nil, &col); err != nil {
		return nil, err
	}
	out := make([]Payment, 0, len(col.Items))
	for _, it := range col.Items {
		p, err := decoded(op, it.domain)
		if err != nil {
			return nil, err
		}
		out = append(out, *p)
	}
	return out, nil
}

// Refund implements Gateway: POST /v1/payments/{id}/refund with the
// X-Refund-Idempotency header set to IdempotencyKey(req.RefundID).
func (c *Client) Refund(ctx context.Context, req RefundRequest) (*Refund, error) {
	const op = "refund"
	if err := checkID(op, req.PaymentID); err != nil {
		return nil, err
	}
	if req.Paise <= 0 {
		return nil, invalid(op, "amount", "must be positive")
	}
	if req.RefundID == "" {
		return nil, invalid(op, "refund_id", "required: it is the idempotency key")
	}
	n, err := notesWith(op, req.Notes, "refund_id", req.RefundID)
	if err != nil {
		return nil, err
	}
	body := map[string]any{"amount": req.Paise, "speed": "normal", "notes": n}
	if len(req.RefundID) <= 40 {
		body["receipt"] = req.RefundID
	}
	h := http.Header{"X-Refund-Idempotency": {IdempotencyKey(req.RefundID)}}
	var r rzpRefund
	if err := c.do(ctx, op, http.MethodPost, "/v1/payments/"+url.PathEscape(req.PaymentID)+"/refund", body, h, &r); err != nil {
		return nil, err
	}
	return decoded(op, r.domain)
}

// FetchRefund implements Gateway: GET /v1/refunds/{id}.
func (c *Client) FetchRefund(ctx context.Context, refundID string) (*Refund, error) {
	return fetch(ctx, c, "fetch refund", "/v1/refunds/", refundID, rzpRefund.domain)
}

// VerifyWebhook implements Gateway with the configured webhook secrets.
func (c *Client) VerifyWebhook(h http.Header, body []byte) (*Event, error) {
	return c.verifier.Verify(h, body)
}

// IdempotencyKey returns the X-Refund-Idempotency key for a refund id: the
// id itself when the PG accepts it (10 to 64 letters, digits, hyphens,
// underscores), otherwise "rfid_" and 40 hex digits of its SHA-256, so the
// same refund id always gives the same key.
func IdempotencyKey(refundID string) string {
	if len(refundID) >= 10 && len(refundID) <= 64 && keyChars(refundID) {
		return refundID
	}
	sum := sha256.Sum256([]byte(refundID))
	return "rfid_" + hex.EncodeToString(sum[:20])
}

func keyChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// do makes one call: JSON in, JSON out, basic auth, the timeout, and the
// error classification.
func (c *Client) do(ctx context.Context, op, method, path string, in any, header http.Header, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return &Error{Op: op, Kind: KindInvalid, Err: err}
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, body)
	if err != nil {
		return &Error{Op: op, Kind: KindInvalid, Err: err}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.SetBasicAuth(c.keyID, c.keySecret)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "ocpihub")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now() // elapsed wall time for the log line
	resp, err := c.http.Do(req)
	if err != nil {
		kind := KindNetwork
		if ctx.Err() != nil || isTimeout(err) {
			kind = KindTimeout
		}
		c.logger.DebugContext(ctx, "pg call failed", "op", op, "method", method, "path", path, "kind", kind, "duration", time.Since(start))
		return &Error{Op: op, Kind: kind, Err: stripURL(err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		kind := KindNetwork
		if ctx.Err() != nil || isTimeout(err) {
			kind = KindTimeout
		}
		return &Error{Op: op, Kind: kind, HTTPStatus: resp.StatusCode, Err: err}
	}
	c.logger.DebugContext(ctx, "pg call", "op", op, "method", method, "path", path, "status", resp.StatusCode, "duration", time.Since(start))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var eb struct {
			Error errorBody `json:"error"`
		}
		_ = json.Unmarshal(raw, &eb)
		return classify(op, resp.StatusCode, eb.Error, c.retryAfter(resp.Header.Get("Retry-After")))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &Error{Op: op, Kind: KindProtocol, HTTPStatus: resp.StatusCode, Err: fmt.Errorf("decode the answer: %w", err)}
	}
	return nil
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func (c *Client) retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(c.clock.Now()); d > 0 {
			return d
		}
	}
	return 0
}

// decoded converts a wire entity and classifies a bad one as a protocol
// error.
// fetch is the GET of one object by id at path+id (the id checked, then
// escaped), its answer W converted by domain.
func fetch[W, T any](ctx context.Context, c *Client, op, path, id string, domain func(W) (*T, error)) (*T, error) {
	if err := checkID(op, id); err != nil {
		return nil, err
	}
	var w W
	if err := c.do(ctx, op, http.MethodGet, path+url.PathEscape(id), nil, nil, &w); err != nil {
		return nil, err
	}
	return decoded(op, func() (*T, error) { return domain(w) })
}

func decoded[T any](op string, conv func() (*T, error)) (*T, error) {
	v, err := conv()
	if err != nil {
		return nil, &Error{Op: op, Kind: KindProtocol, Err: err}
	}
	return v, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// stripURL drops the URL from a transport error (it is in the op already,
// and a URL with credentials must never reach a log).
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func invalid(op, field, issue string) *Error {
	return &Error{Op: op, Kind: KindInvalid, Field: field, Description: issue}
}

func checkID(op, id string) error {
	if id == "" || len(id) > 64 || strings.ContainsAny(id, "/?#% \t\r\n") {
		return invalid(op, "id", "want a PG id")
	}
	return nil
}

func checkAmount(op string, a Amount) error {
	if a.Paise <= 0 {
		return invalid(op, "amount", "must be positive")
	}
	if !ValidCurrency(a.Currency) {
		return invalid(op, "currency", "want a three-letter ISO 4217 code")
	}
	return nil
}

// notesWith returns a copy of notes with key set to value, checked against
// the PG's limits (checkNotes).
func notesWith(op string, notes map[string]string, key, value string) (map[string]string, error) {
	n := copyNotes(notes)
	if n == nil {
		n = map[string]string{}
	}
	n[key] = value
	return n, checkNotes(op, n)
}

// checkNotes applies the PG's limits: 15 pairs, values up to 256 characters.
func checkNotes(op string, n map[string]string) error {
	if len(n) > 15 {
		return invalid(op, "notes", "at most 15 key-value pairs")
	}
	for k, v := range n {
		if len(v) > 256 || len(k) > 256 {
			return invalid(op, "notes."+k, "at most 256 characters")
		}
	}
	return nil
}
