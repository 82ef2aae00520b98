package pg_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
)

type bundle struct {
	sim    *pgsim.Server
	client *pg.Client
	ctx    context.Context
}

// setup starts a simulator on loopback and a client for it.
func setup(t *testing.T, tweak ...func(*pg.Config)) *bundle {
	t.Helper()
	sim, err := pgsim.Start(pgsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	cfg := pg.Config{BaseURL: sim.URL(), KeyID: sim.KeyID(), KeySecret: sim.KeySecret(), Timeout: 5 * time.Second}
	for _, f := range tweak {
		f(&cfg)
	}
	c, err := pg.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return &bundle{sim: sim, client: c, ctx: ctx}
}

// order creates an order of paise through the client.
func (b *bundle) order(t *testing.T, paise int64) *pg.Order {
	t.Helper()
	o, err := b.client.CreateOrder(b.ctx, pg.OrderRequest{Amount: pg.INR(paise), Receipt: "rcpt-1", Notes: map[string]string{"qr_ref": "QR-BLR-001"}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// captured creates an order and has the payer pay it.
func (b *bundle) captured(t *testing.T, paise int64) pgsim.Payment {
	t.Helper()
	o := b.order(t, paise)
	p, err := b.sim.Pay(b.ctx, o.ID, pgsim.Captured)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func asError(t *testing.T, err error) *pg.Error {
	t.Helper()
	var e *pg.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *pg.Error", err, err)
	}
	return e
}

func TestOrders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := b.order(t, 15050)
	if !strings.HasPrefix(o.ID, "order_") || o.Amount != pg.INR(15050) || o.AmountDue != 15050 || o.AmountPaid != 0 ||
		o.Status != pg.OrderCreated || o.Receipt != "rcpt-1" || o.Notes["qr_ref"] != "QR-BLR-001" || o.CreatedAt.IsZero() {
		t.Fatalf("created order = %+v", o)
	}
	if got, ok := b.sim.Order(o.ID); !ok || got.Amount != 15050 || got.Notes["qr_ref"] != "QR-BLR-001" {
		t.Fatalf("the simulator stored %+v", got)
	}
	if _, err := b.sim.Pay(b.ctx, o.ID, pgsim.Captured); err != nil {
		t.Fatal(err)
	}
	f, err := b.client.FetchOrder(b.ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if f.Status != pg.OrderPaid || f.AmountPaid != 15050 || f.AmountDue != 0 || f.Attempts != 1 {
		t.Errorf("fetched order = %+v", f)
	}
}

func TestCreateOrderValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Refused before sending.
	for _, req := range []pg.OrderRequest{
		{Amount: pg.INR(0)},
		{Amount: pg.Amount{Paise: 100, Currency: "rupees"}},
		{Amount: pg.INR(100), Receipt: strings.Repeat("r", 41)},
		{Amount: pg.INR(100), Notes: map[string]string{"k": strings.Repeat("v", 257)}},
	} {
		_, err := b.client.CreateOrder(b.ctx, req)
		if e := asError(t, err); e.Kind != pg.KindInvalid || e.Retryable() {
			t.Errorf("CreateOrder(%+v): %v, want KindInvalid", req, err)
		}
	}
	if n := b.sim.Calls(pgsim.APICreateOrder); n != 0 {
		t.Fatalf("%d calls reached the PG", n)
	}
	// Refused by the PG: below ₹1.00.
	_, err := b.client.CreateOrder(b.ctx, pg.OrderRequest{Amount: pg.INR(99)})
	e := asError(t, err)
	if e.Kind != pg.KindRejected || e.HTTPStatus != 400 || e.Code != "BAD_REQUEST_ERROR" || e.Field != "amount" || e.Retryable() {
		t.Errorf("order of 99 paise: %+v", e)
	}
}

func TestCreateUPIQR(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := b.order(t, 25000)
	q, err := b.client.CreateUPIQR(b.ctx, pg.QRRequest{OrderID: o.ID, Amount: o.Amount, Name: "Koramangala CP-1", Description: "EV charging",
		CloseBy: time.Now().Add(15 * time.Minute), Notes: map[string]string{"qr_ref": "QR-BLR-001"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(q.ID, "qr_") || q.Status != "active" || q.Amount != pg.INR(25000) || q.Notes["order_id"] != o.ID || q.Notes["qr_ref"] != "QR-BLR-001" {
		t.Errorf("QR = %+v", q)
	}
	if !strings.HasPrefix(q.Intent, "upi://pay?") || !strings.Contains(q.Intent, "am=250.00") || !strings.Contains(q.Intent, "cu=INR") {
		t.Errorf("intent = %q", q.Intent)
	}
	// The image URL leads to the simulator's checkout page, where paying
	// pays the order.
	resp, err := http.PostForm(q.ImageURL, map[string][]string{"scenario": {"captured"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, _ := b.sim.Order(o.ID); got.Status != "paid" {
		t.Errorf("after paying on the checkout page the order is %s", got.Status)
	}
	// A code for an order that does not exist, or for another amount, is
	// refused.
	for _, req := range []pg.QRRequest{{OrderID: "order_nope", Amount: o.Amount}, {OrderID: o.ID, Amount: pg.INR(100)}} {
		_, err := b.client.CreateUPIQR(b.ctx, req)
		if e := asError(t, err); e.Kind != pg.KindRejected {
			t.Errorf("CreateUPIQR(%+v) = %v, want rejected", req, err)
		}
	}
}

func TestPayments(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := b.order(t, 30000)
	first, err := b.sim.Attempt(b.ctx, o.ID, "asha@okhdfc")
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.client.FetchPayment(b.ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != pg.PaymentCreated || p.Status.Final() || p.OrderID != o.ID || p.VPA != "asha@okhdfc" || p.Method != "upi" || p.Captured {
		t.Errorf("pending payment = %+v", p)
	}
	if _, err := b.sim.Fail(b.ctx, first.ID, "", ""); err != nil {
		t.Fatal(err)
	}
	p, _ = b.client.FetchPayment(b.ctx, first.ID)
	if p.Status != pg.PaymentFailed || p.ErrorCode == "" || p.ErrorDescription == "" || p.ErrorReason == "" {
		t.Errorf("failed payment = %+v", p)
	}
	second, err := b.sim.Pay(b.ctx, o.ID, pgsim.Captured)
	if err != nil {
		t.Fatal(err)
	}
	p, _ = b.client.FetchPayment(b.ctx, second.ID)
	if p.Status != pg.PaymentCaptured || !p.Captured || p.Amount != pg.INR(30000) || p.RRN == "" || p.Notes["qr_ref"] != "QR-BLR-001" {
		t.Errorf("captured payment = %+v", p)
	}
	all, err := b.client.OrderPayments(b.ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ID != first.ID || all[0].Status != pg.PaymentFailed || all[1].ID != second.ID || all[1].Status != pg.PaymentCaptured {
		t.Errorf("order payments = %+v", all)
	}
	empty := b.order(t, 100)
	if none, err := b.client.OrderPayments(b.ctx, empty.ID); err != nil || len(none) != 0 {
		t.Errorf("payments of an unpaid order = %v, %v", none, err)
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	calls := map[string]func() error{
		"FetchOrder":    func() error { _, err := b.client.FetchOrder(b.ctx, "order_missing"); return err },
		"FetchPayment":  func() error { _, err := b.client.FetchPayment(b.ctx, "pay_missing"); return err },
		"OrderPayments": func() error { _, err := b.client.OrderPayments(b.ctx, "order_missing"); return err },
		"FetchRefund":   func() error { _, err := b.client.FetchRefund(b.ctx, "rfnd_missing"); return err },
		"Refund": func() error {
			_, err := b.client.Refund(b.ctx, pg.RefundRequest{PaymentID: "pay_missing", Paise: 100, RefundID: "refund-000001"})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, pg.ErrNotFound) || pg.IsRetryable(err) {
			t.Errorf("%s: %v, want ErrNotFound, not retryable", name, err)
		}
	}
}

// TestErrorClasses drives every client call into every failure the
// simulator can inject and checks the classification.
func TestErrorClasses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pay := b.captured(t, 50000)
	o := b.order(t, 20000)
	r, err := b.client.Refund(b.ctx, pg.RefundRequest{PaymentID: pay.ID, Paise: 100, RefundID: "refund-base-1"})
	if err != nil {
		t.Fatal(err)
	}
	calls := map[pgsim.API]func(ctx context.Context) error{
		pgsim.APICreateOrder: func(ctx context.Context) error {
			_, err := b.client.CreateOrder(ctx, pg.OrderRequest{Amount: pg.INR(100)})
			return err
		},
		pgsim.APIFetchOrder:    func(ctx context.Context) error { _, err := b.client.FetchOrder(ctx, o.ID); return err },
		pgsim.APIOrderPayments: func(ctx context.Context) error { _, err := b.client.OrderPayments(ctx, o.ID); return err },
		pgsim.APICreateQR: func(ctx context.Context) error {
			_, err := b.client.CreateUPIQR(ctx, pg.QRRequest{OrderID: o.ID, Amount: o.Amount})
			return err
		},
		pgsim.APIFetchPayment: func(ctx context.Context) error { _, err := b.client.FetchPayment(ctx, pay.ID); return err },
		pgsim.APIRefund: func(ctx context.Context) error {
			_, err := b.client.Refund(ctx, pg.RefundRequest{PaymentID: pay.ID, Paise: 100, RefundID: "refund-base-1"})
			return err
		},
		pgsim.APIFetchRefund: func(ctx context.Context) error { _, err := b.client.FetchRefund(ctx, r.ID); return err },
	}
	faults := []struct {
		name      string
		fault     pgsim.Fault
		kind      pg.Kind
		retryable bool
		check     func(*pg.Error) bool
	}{
		{"500", pgsim.ServerError(), pg.KindServer, true, func(e *pg.Error) bool { return e.HTTPStatus == 500 && e.Code == "SERVER_ERROR" }},
		{"503", pgsim.Unavailable(), pg.KindServer, true, func(e *pg.Error) bool { return e.HTTPStatus == 503 }},
		{"429", pgsim.RateLimited(7 * time.Second), pg.KindRateLimited, true, func(e *pg.Error) bool {
			return e.HTTPStatus == 429 && e.RetryAfter == 7*time.Second && pg.RetryAfter(e) == 7*time.Second
		}},
		{"409", pgsim.Fault{Status: 409, Code: "BAD_REQUEST_ERROR", Description: "request in progress"}, pg.KindConflict, true, nil},
		{"timeout", pgsim.Timeout(), pg.KindTimeout, true, func(e *pg.Error) bool { return e.HTTPStatus == 0 }},
		{"400", pgsim.Rejected("BAD_REQUEST_ERROR", "refused for the test"), pg.KindRejected, false, func(e *pg.Error) bool {
			return e.HTTPStatus == 400 && e.Code == "BAD_REQUEST_ERROR" && e.Description == "refused for the test"
		}},
		{"403", pgsim.Fault{Status: 403, Code: "BAD_REQUEST_ERROR", Description: "forbidden"}, pg.KindAuth, false, nil},
	}
	for api, call := range calls {
		for _, f := range faults {
			before := b.sim.Calls(api)
			b.sim.FailNext(api, 1, f.fault)
			ctx, cancel := b.ctx, context.CancelFunc(func() {})
			if f.fault.Hang {
				// Hung calls end at the caller's deadline (the client's own
				// timeout is checked in TestAuthAndTransportErrors).
				ctx, cancel = context.WithTimeout(b.ctx, 50*time.Millisecond)
			}
			err := call(ctx)
			cancel()
			if b.sim.Calls(api) != before+1 {
				t.Errorf("%s: the call did not reach %s", f.name, api)
			}
			var e *pg.Error
			if !errors.As(err, &e) || e.Kind != f.kind || e.Retryable() != f.retryable || pg.IsRetryable(err) != f.retryable {
				t.Errorf("%s on %s: %v, want kind %s retryable %v", f.name, api, err, f.kind, f.retryable)
				continue
			}
			if f.check != nil && !f.check(e) {
				t.Errorf("%s on %s: %+v", f.name, api, e)
			}
			// The fault was for one call only.
			if err := call(b.ctx); err != nil {
				t.Errorf("%s on %s: the next call failed too: %v", f.name, api, err)
			}
		}
	}
}

func TestAuthAndTransportErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	bad, err := pg.NewClient(pg.Config{BaseURL: b.sim.URL(), KeyID: b.sim.KeyID(), KeySecret: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.FetchPayment(b.ctx, "pay_x")
	if e := asError(t, err); e.Kind != pg.KindAuth || e.HTTPStatus != 401 || e.Retryable() || strings.Contains(err.Error(), "wrong") {
		t.Errorf("wrong secret: %v", err)
	}

	// Nobody listens: a network error, retryable.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	c, _ := pg.NewClient(pg.Config{BaseURL: dead, KeyID: "k", KeySecret: "s"})
	_, err = c.FetchOrder(b.ctx, "order_x")
	if e := asError(t, err); e.Kind != pg.KindNetwork || !e.Retryable() {
		t.Errorf("dead PG: %v", err)
	}

	// A 2xx answer that is not the entity: the outcome is unknown, retry.
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<html>maintenance</html>`))
	}))
	t.Cleanup(garbage.Close)
	c, _ = pg.NewClient(pg.Config{BaseURL: garbage.URL, KeyID: "k", KeySecret: "s"})
	_, err = c.Refund(b.ctx, pg.RefundRequest{PaymentID: "pay_x", Paise: 100, RefundID: "refund-000001"})
	if e := asError(t, err); e.Kind != pg.KindProtocol || !e.Retryable() {
		t.Errorf("unreadable answer: %v", err)
	}

	// The client's own timeout.
	quick, _ := pg.NewClient(pg.Config{BaseURL: b.sim.URL(), KeyID: b.sim.KeyID(), KeySecret: b.sim.KeySecret(), Timeout: 50 * time.Millisecond})
	b.sim.FailNext(pgsim.APIFetchPayment, 1, pgsim.Timeout())
	_, err = quick.FetchPayment(b.ctx, "pay_x")
	if e := asError(t, err); e.Kind != pg.KindTimeout || !e.Retryable() {
		t.Errorf("client timeout: %v", err)
	}

	// The caller's own deadline is a timeout too.
	b.sim.FailNext(pgsim.APIFetchOrder, 1, pgsim.Timeout())
	ctx, cancel := context.WithTimeout(b.ctx, 100*time.Millisecond)
	defer cancel()
	_, err = b.client.FetchOrder(ctx, "order_x")
	if e := asError(t, err); e.Kind != pg.KindTimeout || !e.Retryable() {
		t.Errorf("caller deadline: %v", err)
	}

	if _, err := pg.NewClient(pg.Config{}); !errors.Is(err, pg.ErrNotConfigured) {
		t.Errorf("no base URL: %v", err)
	}
	if _, err := pg.NewClient(pg.Config{BaseURL: "ftp://pg", KeyID: "k", KeySecret: "s"}); err == nil {
		t.Error("an ftp base URL was accepted")
	}
	if _, err := pg.NewClient(pg.Config{BaseURL: "https://api.pg.example"}); err == nil {
		t.Error("a client without keys was accepted")
	}
}
