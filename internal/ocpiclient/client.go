// Package ocpiclient makes ocpihub's outgoing OCPI calls: discovery (versions
// → version details → endpoints), the Authorization header in each partner's
// encoding, X-Request-ID / X-Correlation-ID, OCPI-to/from routing headers,
// timeouts, retries of 5xx and 429 with exponential backoff and jitter, and
// following Link pages.
package ocpiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/ids"
	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Defaults for outgoing calls (gaps.md §11: the spec sets none).
const (
	DefaultTimeout     = 30 * time.Second
	DefaultMaxAttempts = 3
	// DefaultRetryAfter is the wait after a 429 without Retry-After.
	DefaultRetryAfter = 60 * time.Second
	maxResponseBytes  = 16 << 20
)

// Client calls OCPI partners.
type Client struct {
	HTTP   *http.Client
	Logger *slog.Logger
	// UserAgent identifies ocpihub in partners' logs.
	UserAgent string
	// SleepFunc waits between attempts; tests replace it.
	SleepFunc func(ctx context.Context, d time.Duration) error
	// BackoffBase is the first retry delay (default 500ms), doubling per attempt.
	BackoffBase time.Duration
	// Observer, when set, sees every attempt of every call (the traffic
	// inspector records them).
	Observer Observer
}

// Observer sees the attempts of calls. ObserveCall must not block: it runs
// on the caller's goroutine.
type Observer interface {
	ObserveCall(ctx context.Context, a Attempt)
}

// Attempt is one attempt of a call as it was sent and answered.
type Attempt struct {
	Request Request
	// Header and Body are what was sent (Authorization included: the
	// observer must redact).
	Header   http.Header
	Body     []byte
	Duration time.Duration
	// Response is nil when no answer came; Err says why.
	Response *Response
	Err      error
}

// New returns a client with sane transport settings that dials any address:
// for simulators and tests, which call loopback by design. The hub calls
// partners with NewGuarded.
func New(logger *slog.Logger) *Client {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	tr.ResponseHeaderTimeout = DefaultTimeout
	return &Client{HTTP: &http.Client{Transport: tr}, Logger: logger, UserAgent: "ocpihub"}
}

// NewGuarded returns a client whose every connection, redirect hops
// included, goes through the outbound address guard g (a nil g refuses
// every internal address). A refused call fails at once with KindUnreachable
// (netguard.IsRefused tells it apart) and is not retried.
func NewGuarded(logger *slog.Logger, g *netguard.Guard) *Client {
	if g == nil {
		g = netguard.New()
	}
	c := New(logger)
	tr := g.Transport()
	tr.MaxIdleConnsPerHost = 64
	tr.ResponseHeaderTimeout = DefaultTimeout
	c.HTTP = &http.Client{Transport: tr}
	return c
}

// Party addresses a party in OCPI-to/from headers.
type Party struct {
	CountryCode string
	PartyID     string
}

// IsZero reports an empty address.
func (p Party) IsZero() bool { return p.CountryCode == "" && p.PartyID == "" }

// Request is one logical OCPI call.
type Request struct {
	Method string
	URL    string
	// Body is marshalled as JSON unless it is already []byte or
	// json.RawMessage; nil sends no body.
	Body any
	// Token is the credentials token the partner gave us; Base64 says how to
	// put it in the header (2.2.1: yes; 2.1.1/2.0 and some 2.2 peers: no).
	Token  string
	Base64 bool
	// CorrelationID is kept across a chain of calls; a new one is made when
	// empty.
	CorrelationID string
	// RequestID is used for every attempt of this call (so a partner that
	// deduplicates on it sees retries as one request); new when empty.
	RequestID string
	// To and From fill the OCPI-to-* and OCPI-from-* headers (functional
	// modules only, 2.2+).
	To, From Party
	// Header adds more headers.
	Header http.Header
	// Timeout bounds each attempt (default 30s).
	Timeout time.Duration
	// MaxAttempts: 0 means DefaultMaxAttempts; 1 disables retries.
	MaxAttempts int
	// PlatformID, Partner and Module say whom and what the call is for, for
	// the traffic inspector (Module is taken from the URL when empty).
	PlatformID int64
	Partner    string
	Module     string
}

// Response is a partner's answer.
type Response struct {
	HTTPStatus int
	Header     http.Header
	Body       []byte
	// Envelope is nil when the body was not an OCPI envelope.
	Envelope  *ocpi.Envelope
	RequestID string
	Attempts  int
	Latency   time.Duration
}

// ErrorKind classifies a failed call for the hub's status codes.
type ErrorKind int

// Error kinds.
const (
	// KindUnreachable: no connection or the connection broke (OCPI 3001/4003).
	KindUnreachable ErrorKind = iota + 1
	// KindTimeout: no answer in time (OCPI 4002).
	KindTimeout
	// KindHTTP: an HTTP error status after all attempts.
	KindHTTP
	// KindProtocol: an answer that is not an OCPI envelope, or a non-1xxx
	// status_code.
	KindProtocol
)

// Error is a failed call.
type Error struct {
	Kind     ErrorKind
	URL      string
	Status   int // HTTP status, when there was one
	Response *Response
	Err      error
}

func (e *Error) Error() string {
	var what string
	switch e.Kind {
	case KindUnreachable:
		what = "unreachable"
	case KindTimeout:
		what = "timed out"
	case KindHTTP:
		what = "HTTP " + strconv.Itoa(e.Status)
	case KindProtocol:
		what = "protocol error"
	}
	msg := e.URL + ": " + what
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of a call error, or 0.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// Do performs a call with retries. It returns the last response even when its
// status_code is not 1xxx; an *Error is returned only when no usable answer
// came (network, timeout, HTTP error, not an envelope).
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	var body []byte
	switch b := req.Body.(type) {
	case nil:
	case []byte:
		body = b
	case json.RawMessage:
		body = b
	default:
		var err error
		if body, err = json.Marshal(b); err != nil {
			return nil, fmt.Errorf("encode request body: %w", err)
		}
	}
	if req.RequestID == "" {
		req.RequestID = ids.New()
	}
	if req.CorrelationID == "" {
		req.CorrelationID = ids.New()
	}
	attempts := req.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	start := time.Now() // elapsed wall time: the response's latency
	var lastErr error
	for attempt := 1; ; attempt++ {
		resp, err := c.once(ctx, req, body)
		if resp != nil {
			resp.Attempts = attempt
			resp.Latency = time.Since(start)
		}
		wait, retry := c.retryable(resp, err, attempt)
		if !retry || attempt >= attempts || ctx.Err() != nil {
			if err == nil && resp.HTTPStatus >= 400 && (resp.Envelope == nil || resp.HTTPStatus >= 500 || resp.HTTPStatus == 429) {
				err = &Error{Kind: KindHTTP, URL: req.URL, Status: resp.HTTPStatus, Response: resp}
			}
			if err != nil {
				lastErr = err
				return resp, lastErr
			}
			return resp, nil
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			if err == nil {
				err = &Error{Kind: KindHTTP, URL: req.URL, Status: resp.HTTPStatus, Response: resp}
			}
			return resp, err
		}
		c.Logger.DebugContext(ctx, "retrying OCPI call", "url", req.URL, "attempt", attempt, "wait", wait, "error", err)
		if err := c.sleep(ctx, wait); err != nil {
			return resp, &Error{Kind: KindTimeout, URL: req.URL, Err: err}
		}
	}
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.SleepFunc != nil {
		return c.SleepFunc(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryable decides whether to try again and after how long: network errors,
// timeouts and 5xx with exponential backoff and jitter; 429 after Retry-After
// (60 s when absent).
func (c *Client) retryable(resp *Response, err error, attempt int) (time.Duration, bool) {
	if err != nil {
		if netguard.IsRefused(err) {
			// The same address is refused every time.
			return 0, false
		}
		k := KindOf(err)
		return c.backoff(attempt), k == KindUnreachable || k == KindTimeout
	}
	switch {
	case resp.HTTPStatus == http.StatusTooManyRequests:
		return retryAfter(resp.Header.Get("Retry-After")), true
	case resp.HTTPStatus >= 500:
		return c.backoff(attempt), true
	}
	return 0, false
}

func (c *Client) backoff(attempt int) time.Duration {
	base := c.BackoffBase
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	d := base << (attempt - 1)
	// Full jitter in [d/2, d*3/2): retries of many calls spread out.
	return d/2 + time.Duration(rand.Int64N(int64(d)))
}

func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return DefaultRetryAfter
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return DefaultRetryAfter
}

// once performs one attempt.
func (c *Client) once(ctx context.Context, req Request, body []byte) (*Response, error) {
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(actx, req.Method, req.URL, rd)
	if err != nil {
		return nil, &Error{Kind: KindUnreachable, URL: req.URL, Err: err}
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	hr.Header.Set("Accept", "application/json")
	if req.Token != "" {
		hr.Header.Set("Authorization", ocpi.EncodeToken(req.Token, req.Base64))
	}
	hr.Header.Set("X-Request-ID", req.RequestID)
	hr.Header.Set("X-Correlation-ID", req.CorrelationID)
	hr.Header.Set("traceparent", traceParent(ctx, req.CorrelationID))
	if !req.To.IsZero() {
		hr.Header.Set("OCPI-to-country-code", req.To.CountryCode)
		hr.Header.Set("OCPI-to-party-id", req.To.PartyID)
	}
	if !req.From.IsZero() {
		hr.Header.Set("OCPI-from-country-code", req.From.CountryCode)
		hr.Header.Set("OCPI-from-party-id", req.From.PartyID)
	}
	if c.UserAgent != "" {
		hr.Header.Set("User-Agent", c.UserAgent)
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			hr.Header.Add(k, v)
		}
	}
	started := time.Now() // elapsed wall time: the attempt's duration for the observer
	resp, err := c.send(hr, req)
	if c.Observer != nil {
		c.Observer.ObserveCall(ctx, Attempt{Request: req, Header: hr.Header, Body: body, Duration: time.Since(started), Response: resp, Err: err})
	}
	return resp, err
}

// send performs the HTTP exchange of one attempt.
func (c *Client) send(hr *http.Request, req Request) (*Response, error) {
	hresp, err := c.HTTP.Do(hr)
	if err != nil {
		kind := KindUnreachable
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			kind = KindTimeout
		}
		return nil, &Error{Kind: kind, URL: req.URL, Err: err}
	}
	defer hresp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(hresp.Body, maxResponseBytes))
	if err != nil {
		kind := KindUnreachable
		if errors.Is(err, context.DeadlineExceeded) {
			kind = KindTimeout
		}
		return nil, &Error{Kind: kind, URL: req.URL, Err: err}
	}
	resp := &Response{HTTPStatus: hresp.StatusCode, Header: hresp.Header, Body: raw, RequestID: req.RequestID}
	if env, err := ocpi.DecodeEnvelope(raw); err == nil {
		resp.Envelope = env
	}
	return resp, nil
}

// Call performs a call and requires an OCPI success: HTTP 2xx and a 1xxx
// status_code. On success it decodes data into out (when out is not nil).
func (c *Client) Call(ctx context.Context, req Request, out any) (*Response, error) {
	resp, err := c.Do(ctx, req)
	if err != nil {
		return resp, err
	}
	if resp.Envelope == nil {
		return resp, &Error{Kind: KindProtocol, URL: req.URL, Status: resp.HTTPStatus, Response: resp, Err: fmt.Errorf("the answer is not an OCPI envelope (HTTP %d)", resp.HTTPStatus)}
	}
	if resp.HTTPStatus >= 300 || !ocpi.IsSuccess(resp.Envelope.StatusCode) {
		msg := resp.Envelope.StatusMessage
		return resp, &Error{Kind: KindProtocol, URL: req.URL, Status: resp.HTTPStatus, Response: resp,
			Err: fmt.Errorf("status_code %d (HTTP %d): %s", resp.Envelope.StatusCode, resp.HTTPStatus, msg)}
	}
	if out != nil && len(resp.Envelope.Data) > 0 {
		if err := json.Unmarshal(resp.Envelope.Data, out); err != nil {
			return resp, &Error{Kind: KindProtocol, URL: req.URL, Status: resp.HTTPStatus, Response: resp, Err: fmt.Errorf("decode data: %w", err)}
		}
	}
	return resp, nil
}
