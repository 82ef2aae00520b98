package pgsim_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
)

// receiver is a webhook endpoint on loopback that verifies what it gets
// with internal/pg, as the hub will.
type receiver struct {
	srv      *httptest.Server
	verifier *pg.Verifier
	status   atomic.Int32
	inFlight atomic.Int32
	peak     atomic.Int32
	mu       sync.Mutex
	events   []*pg.Event
	errs     []error
	// gate, when set, holds each request until closed (to observe
	// concurrency); arrived gets a value as each request comes in.
	gate    chan struct{}
	arrived chan struct{}
}

func newReceiver(t *testing.T, secrets ...string) *receiver {
	t.Helper()
	rc := &receiver{verifier: pg.NewVerifier(pg.WebhookConfig{Secrets: secrets}, nil), arrived: make(chan struct{}, 1000)}
	rc.status.Store(http.StatusOK)
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := rc.inFlight.Add(1)
		defer rc.inFlight.Add(-1)
		for {
			p := rc.peak.Load()
			if n <= p || rc.peak.CompareAndSwap(p, n) {
				break
			}
		}
		rc.arrived <- struct{}{}
		if rc.gate != nil {
			<-rc.gate
		}
		body, _ := io.ReadAll(r.Body)
		ev, err := rc.verifier.Verify(r.Header, body)
		rc.mu.Lock()
		if err != nil {
			rc.errs = append(rc.errs, err)
		} else {
			rc.events = append(rc.events, ev)
		}
		rc.mu.Unlock()
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(int(rc.status.Load()))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) got() ([]*pg.Event, []error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*pg.Event(nil), rc.events...), append([]error(nil), rc.errs...)
}

func (rc *receiver) types() []string {
	evs, _ := rc.got()
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

type bundle struct {
	sim    *pgsim.Server
	client *pg.Client
	rc     *receiver
	ctx    context.Context
}

func setup(t *testing.T, form pgsim.Form) *bundle {
	t.Helper()
	rc := newReceiver(t, "whsec-test")
	sim, err := pgsim.Start(pgsim.Options{WebhookURL: rc.srv.URL + "/ocpi/2.2.1/payments/upi/webhook", WebhookSecret: "whsec-test", Form: form})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	c, err := pg.NewClient(pg.Config{BaseURL: sim.URL(), KeyID: sim.KeyID(), KeySecret: sim.KeySecret()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return &bundle{sim: sim, client: c, rc: rc, ctx: ctx}
}

func (b *bundle) order(t *testing.T, paise int64) *pg.Order {
	t.Helper()
	o, err := b.client.CreateOrder(b.ctx, pg.OrderRequest{Amount: pg.INR(paise), Notes: map[string]string{"qr_ref": "QR-1"}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestForms: a captured payment reaches the receiver in each form, signed
// so that internal/pg verifies it, with the same ids and amount.
func TestForms(t *testing.T) {
	t.Parallel()
	for form, typ := range map[pgsim.Form]string{pgsim.FormRazorpay: "payment.captured", pgsim.FormCashfree: "PAYMENT_SUCCESS_WEBHOOK", pgsim.FormFlat: "captured"} {
		t.Run(string(form), func(t *testing.T) {
			t.Parallel()
			b := setup(t, form)
			o := b.order(t, 15050)
			p, err := b.sim.Pay(b.ctx, o.ID, pgsim.Captured)
			if err != nil {
				t.Fatal(err)
			}
			evs, errs := b.rc.got()
			if len(errs) != 0 || len(evs) != 1 {
				t.Fatalf("received %d events, errors %v", len(evs), errs)
			}
			ev := evs[0]
			if ev.Type != typ || ev.Kind != pg.EventPayment || ev.PaymentID != p.ID || ev.OrderID != o.ID ||
				ev.Status != pg.PaymentCaptured || ev.Amount != pg.INR(15050) || ev.PayerVPA != pgsim.DefaultPayerVPA {
				t.Errorf("event = %+v", ev)
			}
			d := b.sim.Deliveries()
			if len(d) != 1 || d[0].Status != 200 || d[0].Err != "" || d[0].Webhook.PaymentID != p.ID {
				t.Errorf("deliveries = %+v", d)
			}
		})
	}
}

// TestScenarios: each scenario sends its webhooks in order, for one
// payment.
func TestScenarios(t *testing.T) {
	t.Parallel()
	tests := map[pgsim.Scenario][]string{
		pgsim.Captured:               {"payment.captured"},
		pgsim.Failed:                 {"payment.failed"},
		pgsim.FailedThenCaptured:     {"payment.failed", "payment.captured"},
		pgsim.PendingThenCaptured:    {"payment.pending", "payment.captured"},
		pgsim.AuthorizedThenCaptured: {"payment.authorized", "payment.captured"},
	}
	statuses := map[string]pg.PaymentStatus{"payment.captured": pg.PaymentCaptured, "payment.failed": pg.PaymentFailed,
		"payment.pending": pg.PaymentCreated, "payment.authorized": pg.PaymentAuthorized}
	for sc, want := range tests {
		t.Run(string(sc), func(t *testing.T) {
			t.Parallel()
			b := setup(t, pgsim.FormRazorpay)
			o := b.order(t, 5000)
			p, err := b.sim.Pay(b.ctx, o.ID, sc)
			if err != nil {
				t.Fatal(err)
			}
			evs, errs := b.rc.got()
			if got := b.rc.types(); strings.Join(got, ",") != strings.Join(want, ",") || len(errs) != 0 {
				t.Fatalf("received %v (errors %v), want %v", got, errs, want)
			}
			for _, ev := range evs {
				if ev.PaymentID != p.ID || ev.Status != statuses[ev.Type] {
					t.Errorf("%s: event %+v", ev.Type, ev)
				}
			}
			if evs[0].ID == evs[len(evs)-1].ID && len(evs) > 1 {
				t.Error("two events share an event id")
			}
			wantFinal := "captured"
			if sc == pgsim.Failed {
				wantFinal = "failed"
			}
			if p.Status != wantFinal {
				t.Errorf("payment ends %s", p.Status)
			}
		})
	}
}

// TestSteps: the steps one by one, and the transitions the PG refuses.
func TestSteps(t *testing.T) {
	t.Parallel()
	b := setup(t, pgsim.FormFlat)
	o := b.order(t, 5000)
	p, err := b.sim.Attempt(b.ctx, o.ID, "asha@okhdfc")
	if err != nil || len(b.sim.Deliveries()) != 0 {
		t.Fatalf("attempt: %v, %d deliveries", err, len(b.sim.Deliveries()))
	}
	if _, err := b.sim.NotifyPending(b.ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	got, _ := b.client.FetchPayment(b.ctx, p.ID)
	if got.Status != pg.PaymentCreated {
		t.Errorf("pending payment at the PG: %+v", got)
	}
	if _, err := b.sim.Capture(b.ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.sim.Fail(b.ctx, p.ID, "", ""); err == nil {
		t.Error("failed a captured payment")
	}
	if _, err := b.sim.Capture(b.ctx, p.ID); err == nil {
		t.Error("captured twice")
	}
	if _, err := b.sim.Attempt(b.ctx, o.ID, ""); err == nil {
		t.Error("a new attempt on a paid order")
	}
	if _, err := b.sim.Pay(b.ctx, "order_missing", pgsim.Captured); err == nil {
		t.Error("paid an unknown order")
	}
	if got := b.rc.types(); strings.Join(got, ",") != "pending,captured" {
		t.Errorf("flat webhooks %v", got)
	}
	evs, _ := b.rc.got()
	if evs[0].PayerVPA != "asha@okhdfc" || evs[1].ID != "flat:"+p.ID+":captured" {
		t.Errorf("events %+v", evs)
	}
}

// TestDriverAndCheckout: other processes pay through HTTP.
func TestDriverAndCheckout(t *testing.T) {
	t.Parallel()
	b := setup(t, pgsim.FormRazorpay)
	o := b.order(t, 12345)
	resp, err := http.Post(b.sim.URL()+"/sim/orders/"+o.ID+"/pay", "application/json", strings.NewReader(`{"scenario":"failed_then_captured"}`))
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ ID, Status string }
	json.NewDecoder(resp.Body).Decode(&p)
	resp.Body.Close()
	if resp.StatusCode != 200 || p.Status != "captured" || len(b.rc.types()) != 2 {
		t.Errorf("driver pay: %d %+v, webhooks %v", resp.StatusCode, p, b.rc.types())
	}
	resp, _ = http.Post(b.sim.URL()+"/sim/orders/order_nope/pay", "application/json", nil)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown order: %d", resp.StatusCode)
	}

	o2 := b.order(t, 50000)
	q, err := b.client.CreateUPIQR(b.ctx, pg.QRRequest{OrderID: o2.ID, Amount: o2.Amount})
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(q.ImageURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "₹500.00") || !strings.Contains(string(page), o2.ID) {
		t.Errorf("checkout page:\n%s", page)
	}
	if _, err := b.sim.PayQR(b.ctx, q.ID, pgsim.Captured); err != nil {
		t.Fatal(err)
	}
	got, _ := b.client.FetchOrder(b.ctx, o2.ID)
	if got.Status != pg.OrderPaid {
		t.Errorf("order after paying its QR: %+v", got)
	}
	if _, err := b.sim.PayQR(b.ctx, "qr_nope", pgsim.Captured); err == nil {
		t.Error("paid an unknown QR code")
	}
}

// TestStrictAPI: like the PG, the simulator refuses fields it does not
// know and wrong credentials, so the client cannot drift from the API.
func TestStrictAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, pgsim.FormRazorpay)
	call := func(user, pass, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, b.sim.URL()+"/v1/orders", strings.NewReader(body))
		req.SetBasicAuth(user, pass)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e struct {
			Error struct{ Code, Description, Field string }
		}
		json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Error.Field
	}
	if st, _ := call(b.sim.KeyID(), "nope", `{"amount":100,"currency":"INR"}`); st != 401 {
		t.Errorf("wrong secret: %d", st)
	}
	if st, f := call(b.sim.KeyID(), b.sim.KeySecret(), `{"amount":100,"currency":"INR","colour":"red"}`); st != 400 || f != "colour" {
		t.Errorf("unknown field: %d %q", st, f)
	}
	if st, f := call(b.sim.KeyID(), b.sim.KeySecret(), `{"amount":"100","currency":"INR"}`); st != 400 || f != "amount" {
		t.Errorf("string amount: %d %q", st, f)
	}
	if st, _ := call(b.sim.KeyID(), b.sim.KeySecret(), `{"amount":100,"currency":"INR"}`); st != 200 {
		t.Errorf("valid order: %d", st)
	}
	if n := b.sim.Calls(pgsim.APICreateOrder); n != 3 {
		t.Errorf("%d authenticated calls counted, want 3", n)
	}
}
