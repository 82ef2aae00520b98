// Package pgsim is ocpihub's payment-gateway simulator: a real HTTP server
// on loopback that speaks the Razorpay-compatible API internal/pg's client
// uses (orders, UPI QR codes, payments, refunds with X-Refund-Idempotency),
// keeps orders, payments and refunds in memory, and sends real signed
// webhooks (Razorpay form by default, Cashfree and the seed's flat form on
// request) when the simulated payer pays.
//
// Tests drive it like a payer's UPI app (Pay with a Scenario, or the steps
// Attempt, NotifyPending, Authorize, Capture, Fail) and inject faults: the
// next calls of an API fail with 5xx, 429 or a timeout, refunds are refused
// with a 4xx, webhooks are held and released in any order, or sent several
// times at once. It is written from the PG's public documentation on its
// own, without internal/pg, so the client is tested against an independent
// implementation of the wire.
package pgsim

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// Options configure a simulator. Zero values get working defaults.
type Options struct {
	// Addr to listen on (default 127.0.0.1:0, a random loopback port).
	Addr string
	// KeyID and KeySecret are the API credentials callers must present as
	// HTTP basic auth (default DefaultKeyID, DefaultKeySecret).
	KeyID     string
	KeySecret string
	// WebhookURL receives the webhooks (none are sent while it is empty).
	WebhookURL string
	// WebhookSecret signs them (default DefaultWebhookSecret).
	WebhookSecret string
	// Form of the webhooks (default FormRazorpay).
	Form Form
	// VPA is the merchant's UPI address in intent links.
	VPA    string
	Clock  clock.Clock
	Logger *slog.Logger
	// HTTPClient sends the webhooks (default: 5 s timeout, like the PGs).
	HTTPClient *http.Client
}

// Defaults for the simulator's credentials.
const (
	DefaultKeyID         = "rzp_test_ocpihubsim"
	DefaultKeySecret     = "sim-key-secret"
	DefaultWebhookSecret = "sim-webhook-secret"
)

// Server is a running PG simulator. It is safe for concurrent use.
type Server struct {
	opts     Options
	listener net.Listener
	server   *http.Server
	logger   *slog.Logger
	clock    clock.Clock
	client   *http.Client
	bg       *simwire.Background

	mu       sync.Mutex
	orders   map[string]*order
	payments map[string]*payment
	refunds  map[string]*refund
	qrs      map[string]*qrCode
	keys     map[string]*refund // X-Refund-Idempotency → refund
	seq      int                // creation order, for stable listings
	faults   map[API][]*faultRule
	calls    map[API]int
	hooks    hookState
	// holdRefunds keeps new refunds pending until ProcessRefund.
	holdRefunds bool
	// overpay lets a paid order take more payments (SetOverpayment).
	overpay bool
}

// Start starts a simulator.
func Start(opts Options) (*Server, error) {
	opts.Addr = cmp.Or(opts.Addr, "127.0.0.1:0")
	opts.KeyID = cmp.Or(opts.KeyID, DefaultKeyID)
	opts.KeySecret = cmp.Or(opts.KeySecret, DefaultKeySecret)
	opts.WebhookSecret = cmp.Or(opts.WebhookSecret, DefaultWebhookSecret)
	opts.Form = cmp.Or(opts.Form, FormRazorpay)
	opts.VPA = cmp.Or(opts.VPA, "ocpihub@pgsim")
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = simwire.Client()
	}
	l, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts: opts, listener: l, logger: opts.Logger, clock: opts.Clock, client: opts.HTTPClient,
		bg:     simwire.NewBackground(),
		orders: map[string]*order{}, payments: map[string]*payment{}, refunds: map[string]*refund{},
		qrs: map[string]*qrCode{}, keys: map[string]*refund{}, faults: map[API][]*faultRule{}, calls: map[API]int{},
	}
	s.hooks.init(opts)
	s.server = simwire.Serve(l, s.routes())
	return s, nil
}

// URL returns the simulator's base URL (what --pg-base-url would be).
func (s *Server) URL() string { return "http://" + s.listener.Addr().String() }

// KeyID returns the API key id callers must use.
func (s *Server) KeyID() string { return s.opts.KeyID }

// KeySecret returns the API key secret callers must use.
func (s *Server) KeySecret() string { return s.opts.KeySecret }

// Close stops the server at once, like a PG going away: connections are
// closed, hung calls released, and background refund processing and
// webhook deliveries are cancelled and waited for. (A graceful Shutdown
// would wait seconds for connections a client dialled but never used.)
func (s *Server) Close() { s.bg.Stop(func() { _ = s.server.Close() }) }

// async runs fn in the background; Close waits for it.
func (s *Server) async(fn func(ctx context.Context)) { s.bg.Go(fn) }

// The stored entities, in Razorpay's vocabulary.
type order struct {
	ID         string
	Amount     int64
	AmountPaid int64
	Currency   string
	Receipt    string
	Status     string // created, attempted, paid
	Attempts   int
	Notes      map[string]string
	CreatedAt  int64
	seq        int
}

type payment struct {
	ID             string
	OrderID        string
	Amount         int64
	Currency       string
	Status         string // created, authorized, captured, failed, refunded
	VPA            string
	Captured       bool
	AmountRefunded int64
	Notes          map[string]string
	ErrorCode      string
	ErrorDesc      string
	ErrorReason    string
	RRN            string
	CreatedAt      int64
	seq            int
}

type refund struct {
	ID        string
	PaymentID string
	Amount    int64
	Currency  string
	Status    string // pending, processed, failed
	Receipt   string
	Notes     map[string]string
	ARN       string
	Key       string // X-Refund-Idempotency
	request   string // canonical request, to refuse a reused key
	CreatedAt int64
	seq       int
}

type qrCode struct {
	ID          string
	Name        string
	Description string
	Amount      int64
	OrderID     string
	Status      string
	Notes       map[string]string
	CloseBy     int64
	CreatedAt   int64
	Received    int64
	Count       int
}

// Order is a snapshot of a simulated order.
type Order struct {
	ID         string
	Amount     int64 // paise
	AmountPaid int64
	Currency   string
	Receipt    string
	Status     string
	Attempts   int
	Notes      map[string]string
}

// Payment is a snapshot of a simulated payment.
type Payment struct {
	ID             string
	OrderID        string
	Amount         int64 // paise
	Currency       string
	Status         string
	VPA            string
	AmountRefunded int64
}

// Refund is a snapshot of a simulated refund.
type Refund struct {
	ID        string
	PaymentID string
	Amount    int64 // paise
	Currency  string
	Status    string
	// Key is the X-Refund-Idempotency key it was created with.
	Key     string
	Receipt string
	Notes   map[string]string
}

func (o *order) snapshot() Order {
	return Order{o.ID, o.Amount, o.AmountPaid, o.Currency, o.Receipt, o.Status, o.Attempts, cloneNotes(o.Notes)}
}

func (p *payment) snapshot() Payment {
	return Payment{p.ID, p.OrderID, p.Amount, p.Currency, p.Status, p.VPA, p.AmountRefunded}
}

func (r *refund) snapshot() Refund {
	return Refund{r.ID, r.PaymentID, r.Amount, r.Currency, r.Status, r.Key, r.Receipt, cloneNotes(r.Notes)}
}

// Orders returns every order, oldest first.
func (s *Server) Orders() []Order {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Order
	for _, o := range sorted(s.orders, func(o *order) int { return o.seq }) {
		out = append(out, o.snapshot())
	}
	return out
}

// Order returns one order.
func (s *Server) Order(id string) (Order, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[id]
	if !ok {
		return Order{}, false
	}
	return o.snapshot(), true
}

// Payment returns one payment.
func (s *Server) Payment(id string) (Payment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[id]
	if !ok {
		return Payment{}, false
	}
	return p.snapshot(), true
}

// Payments returns the payments of an order, oldest first.
func (s *Server) Payments(orderID string) []Payment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Payment
	for _, p := range sorted(s.payments, func(p *payment) int { return p.seq }) {
		if p.OrderID == orderID {
			out = append(out, p.snapshot())
		}
	}
	return out
}

// Refunds returns the refunds of a payment ("" for all), oldest first.
func (s *Server) Refunds(paymentID string) []Refund {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Refund
	for _, r := range sorted(s.refunds, func(r *refund) int { return r.seq }) {
		if paymentID == "" || r.PaymentID == paymentID {
			out = append(out, r.snapshot())
		}
	}
	return out
}

// ErrUnknown is returned by driver calls naming an order or payment the
// simulator does not have.
var ErrUnknown = errors.New("pgsim: unknown id")

func (s *Server) now() int64 { return s.clock.Now().Unix() }

// newID returns prefix_ and 14 random base62 characters, like the PG's ids.
func newID(prefix string) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 14)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + "_" + string(b)
}

func (s *Server) nextSeq() int {
	s.seq++
	return s.seq
}

func sorted[T any](m map[string]*T, key func(*T) int) []*T {
	out := make([]*T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

func cloneNotes(n map[string]string) map[string]string {
	if n == nil {
		return nil
	}
	out := make(map[string]string, len(n))
	for k, v := range n {
		out[k] = v
	}
	return out
}

func rupees(paise int64) string { return fmt.Sprintf("%d.%02d", paise/100, paise%100) }
