package crashtest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// resumeWithin bounds the time from a restart to the moment the money
// work the dead process was doing (a START_SESSION relay, a refund call)
// has been done again: the job queue re-arms a dead process's jobs within
// seconds, not after its rescue minutes later.
const resumeWithin = 15 * time.Second

// upiFixture is a hub subprocess with a CPO and a payment gateway
// simulator in the test process (they outlive the hub's restarts: the PG
// counts the refunds it made, by idempotency key, across them).
type upiFixture struct {
	t   *testing.T
	ctx context.Context
	h   *hubProc
	cpo *sim.CPO
	pg  *pgsim.Server
	db  *store.DB
}

const (
	crashQR  = "CRASH-E1"
	crashLoc = "L1"
)

func startUPI(t *testing.T, ctx context.Context, engine store.Engine) *upiFixture {
	t.Helper()
	db := storetest.URL(t, engine)
	return startUPIOn(t, ctx, db, db)
}

// startUPIOn is startUPI with the hub on the database at db, which the
// test reads at audit (the same database, not through a relay the test
// may cut).
func startUPIOn(t *testing.T, ctx context.Context, db, audit string) *upiFixture {
	t.Helper()
	pg, err := pgsim.Start(pgsim.Options{Logger: hubtest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	cpo := hubtest.StartSim(t, sim.StartCPO, "Crash CPO", "IN", "CPX")
	h := startHubOn(t, db, "OCPIHUB_PG_BASE_URL="+pg.URL(), "OCPIHUB_PG_KEY_ID="+pg.KeyID(), "OCPIHUB_PG_KEY_SECRET="+pg.KeySecret(),
		"OCPIHUB_PG_WEBHOOK_SECRET="+pgsim.DefaultWebhookSecret)
	pg.SetWebhook(h.URL()+"/ocpi/2.2.1/payments/upi/webhook", pgsim.FormRazorpay)
	h.register(ctx, cpo.Platform)
	f := &upiFixture{t: t, ctx: ctx, h: h, cpo: cpo, pg: pg}
	if err := cpo.PutTariff(ctx, "T1", hubtest.Tariff("IN", "CPX", "T1", hubtest.Stamp(0))); err != nil {
		t.Fatal(err)
	}
	loc := location(crashLoc, "AVAILABLE", hubtest.Stamp(0))
	evse := loc["evses"].([]any)[0].(map[string]any)
	evse["capabilities"] = []any{"REMOTE_START_STOP_CAPABLE"}
	evse["connectors"].([]any)[0].(map[string]any)["tariff_ids"] = []any{"T1"}
	if err := cpo.PutLocation(ctx, crashLoc, loc); err != nil {
		t.Fatal(err)
	}
	f.admin(http.MethodPost, "/ocpi/2.2.1/payments/upi/qr", map[string]any{"qr_ref": crashQR, "location_id": crashLoc, "evse_uid": "E1", "connector_id": "1"})
	// The test reads the hub's database beside it, as an auditor would.
	if f.db, err = store.Open(ctx, audit, store.Options{Logger: hubtest.Logger()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.db.Close() })
	return f
}

// admin calls the hub's admin API and fails the test unless it answers 2xx.
func (f *upiFixture) admin(method, path string, body any) {
	f.t.Helper()
	c := ocpiclient.New(hubtest.Logger())
	if _, err := c.Call(f.ctx, ocpiclient.Request{Method: method, URL: f.h.URL() + path, Token: adminToken, Base64: true, Body: body, MaxAttempts: 1}, nil); err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
}

// order submits the landing page's form as a driver does and returns the
// PG's order of it.
func (f *upiFixture) order(rupees string) pgsim.Order {
	f.t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(f.h.URL()+"/qr/"+crashQR, url.Values{"amount": {rupees}, "email": {"driver@example.in"}})
	if err != nil {
		f.t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/pay/") {
		f.t.Fatalf("order: HTTP %d, Location %q", resp.StatusCode, loc)
	}
	orderID := strings.TrimPrefix(loc, "/pay/")
	for _, o := range f.pg.Orders() {
		if o.Receipt == orderID {
			return o
		}
	}
	f.t.Fatalf("the PG has no order for %s", orderID)
	return pgsim.Order{}
}

// money is a payment as the hub's database has it.
type money struct {
	id, status, attention                                        string
	captured, reserved, refunded, cost, notRefundable, shortfall int64
}

// payment reads the hub's payment of a PG payment (ok false while there is
// none).
func (f *upiFixture) payment(pgPaymentID string) (money, bool) {
	var m money
	err := f.db.Read().QueryRow(f.ctx, `SELECT id, status, attention, captured_paise, refund_reserved_paise, refunded_paise, cost_paise,
		not_refundable_paise, shortfall_paise FROM upi_payments WHERE pg_payment_id = $1`, pgPaymentID).
		Scan(&m.id, &m.status, &m.attention, &m.captured, &m.reserved, &m.refunded, &m.cost, &m.notRefundable, &m.shortfall)
	return m, err == nil
}

// waitPayment polls the hub's payment of a PG payment until cond holds;
// it returns the payment and how long after since it first held.
func (f *upiFixture) waitPayment(pgPaymentID, what string, since time.Time, within time.Duration, cond func(money) bool) (money, time.Duration) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.ctx, within+30*time.Second)
	defer cancel()
	var m money
	err := until(ctx, func() bool {
		var ok bool
		m, ok = f.payment(pgPaymentID)
		return ok && cond(m)
	})
	took := time.Since(since)
	if err != nil {
		f.t.Fatalf("payment %s never %s (%.2fs): %+v", pgPaymentID, what, took.Seconds(), m)
	}
	return m, took
}

// session returns the id of the session the hub holds for a payment.
func (f *upiFixture) session(pgPaymentID string) string {
	var id string
	_ = f.db.Read().QueryRow(f.ctx, "SELECT id FROM sessions WHERE payment_reference = $1", pgPaymentID).Scan(&id)
	return id
}

// webhookRefused waits until the PG has tried a webhook of a payment and
// the hub did not take it (what names the webhook in the failure).
func (f *upiFixture) webhookRefused(pgPaymentID, what string) {
	f.t.Helper()
	if err := until(f.ctx, func() bool {
		for _, d := range f.pg.Deliveries() {
			if d.Webhook.PaymentID == pgPaymentID && d.Status != http.StatusOK {
				return true
			}
		}
		return false
	}); err != nil {
		f.t.Fatalf("%s webhook was never tried: %v", what, err)
	}
}

// redeliverFailed sends again, once each, the PG's webhooks that found
// the hub dead: the PG retries them.
func (f *upiFixture) redeliverFailed() int {
	seen := map[string]bool{}
	n := 0
	for _, d := range f.pg.Deliveries() {
		if d.Status == http.StatusOK || seen[d.Webhook.ID] {
			continue
		}
		seen[d.Webhook.ID] = true
		f.pg.Redeliver(f.ctx, d.Webhook)
		n++
	}
	return n
}

// TestUPISurvivesSIGKILL kills the hub at the points of a UPI charge where
// money is in motion and checks, after each restart, that the work resumes
// within resumeWithin and, at the end, that every rupee is accounted for:
//
//  1. The driver paid ₹500; the capture is recorded and START_SESSION is
//     on its way to the CPO (which holds it) when the hub dies. After the
//     restart the relay runs again; the CPO gets one START_SESSION.
//  2. The session ends, the CDR (₹272.88) arrives, and the excess refund
//     (₹227.12) reaches the PG, which makes it, but its answer is lost in
//     the kill. While the hub is down the driver pays the same order again
//     (a second payment, to be refunded in full); its webhook finds the
//     hub dead, and the PG retries it after the restart. The refund job
//     runs again with the same idempotency key: the PG answers with the
//     refund it made.
//  3. Another charge: the PG is unavailable at the excess refund's first
//     call, and the hub dies while the refund waits for its retry.
//
// End state: at the PG, one refund per idempotency key and no payment
// refunded beyond its capture; at the hub, each payment in a terminal
// state with captured = cost + refunded + not refundable − shortfall,
// nothing reserved for a refund still pending, and each of its refunds
// the PG's refund of the same key and amount.
func TestUPISurvivesSIGKILL(t *testing.T) {
	engines(t, func(t *testing.T, engine store.Engine) {
		binary(t)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		f := startUPI(t, ctx, engine)

		// 1. Kill while START_SESSION is in flight.
		release := f.cpo.Hold(sim.PathHas(http.MethodPost, "/commands/START_SESSION"))
		t.Cleanup(release)
		po := f.order("500")
		p1, err := f.pg.Pay(ctx, po.ID, pgsim.Captured)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.cpo.WaitArrived(ctx, 1, sim.PathHas(http.MethodPost, "/commands/START_SESSION")); err != nil {
			t.Fatalf("START_SESSION never got in flight: %v", err)
		}
		if m, ok := f.payment(p1.ID); !ok || m.captured != 500_00 {
			t.Fatalf("before the kill the capture is not recorded: %+v", m)
		}
		f.h.kill()
		// Released once the CPO has seen the dead hub's connection close
		// (see TestBroadcastSurvivesSIGKILL).
		if _, err := f.cpo.WaitArrived(ctx, 1, func(r sim.Request) bool {
			return sim.PathHas(http.MethodPost, "/commands/START_SESSION")(r) && r.Abandoned
		}); err != nil {
			t.Fatalf("the CPO never saw the killed hub's START_SESSION abandoned: %v", err)
		}
		release()
		restart := time.Now()
		f.h.start()
		_, took := f.waitPayment(p1.ID, "charging", restart, resumeWithin, func(m money) bool { return m.status == "CHARGING" })
		report(t, engine, "START_SESSION relayed again and the session started", took)

		// 2. Kill while the excess refund's answer is lost; a second payment
		// on the order while the hub is down.
		sid := f.session(p1.ID)
		if err := until(ctx, func() bool { return sid != "" && f.cpo.Session(sid) != nil }); err != nil {
			t.Fatalf("session of %s: %v", p1.ID, err)
		}
		f.pg.FailNext(pgsim.APIRefund, 1, pgsim.Timeout().Committed())
		if err := f.cpo.StopSession(ctx, sid); err != nil {
			t.Fatal(err)
		}
		if err := until(ctx, func() bool { return len(f.pg.Refunds(p1.ID)) == 1 }); err != nil {
			t.Fatalf("the excess refund never reached the PG: %v", err)
		}
		f.h.kill()
		f.pg.SetOverpayment(true)
		p2, err := f.pg.Pay(ctx, po.ID, pgsim.Captured)
		if err != nil {
			t.Fatal(err)
		}
		f.webhookRefused(p2.ID, "the second payment's")
		restart = time.Now()
		f.h.start()
		n := f.redeliverFailed()
		t.Logf("%s: the PG retried %d webhooks that found the hub dead", engine, n)
		settled := func(status string) func(money) bool {
			return func(m money) bool { return m.status == status && m.reserved == m.refunded }
		}
		_, took = f.waitPayment(p1.ID, "settled with its excess refunded", restart, resumeWithin, settled("SETTLED"))
		report(t, engine, "excess refund resumed and the payment settled", took)
		_, took = f.waitPayment(p2.ID, "refunded", restart, resumeWithin, settled("REFUNDED"))
		report(t, engine, "second payment, captured while the hub was down, refunded", took)

		// 3. Kill while a refund waits in the queue for its retry: the PG
		// was unavailable at its first call.
		po3 := f.order("500")
		p3, err := f.pg.Pay(ctx, po3.ID, pgsim.Captured)
		if err != nil {
			t.Fatal(err)
		}
		f.waitPayment(p3.ID, "charging", time.Now(), time.Minute, func(m money) bool { return m.status == "CHARGING" })
		sid = f.session(p3.ID)
		if err := until(ctx, func() bool { return sid != "" && f.cpo.Session(sid) != nil }); err != nil {
			t.Fatalf("session of %s: %v", p3.ID, err)
		}
		calls := f.pg.Calls(pgsim.APIRefund)
		f.pg.FailNext(pgsim.APIRefund, 1, pgsim.Unavailable())
		if err := f.cpo.StopSession(ctx, sid); err != nil {
			t.Fatal(err)
		}
		if err := until(ctx, func() bool { return f.pg.Calls(pgsim.APIRefund) > calls }); err != nil {
			t.Fatalf("the excess refund never reached the PG: %v", err)
		}
		f.h.kill()
		restart = time.Now()
		f.h.start()
		f.redeliverFailed()
		_, took = f.waitPayment(p3.ID, "settled with its excess refunded", restart, resumeWithin, settled("SETTLED"))
		report(t, engine, "queued refund sent and the payment settled", took)

		f.audit(engine, po.ID, map[string]int64{p1.ID: 272_88, p2.ID: 0})
		f.audit(engine, po3.ID, map[string]int64{p3.ID: 272_88})
		// The two jobs that were in flight at the kills came back through
		// the job queue's re-arming of a dead process's jobs, not its
		// minutes-late rescue.
		logs := f.h.logs.String()
		for _, kind := range []string{"upi_start_session", "upi_refund"} {
			found := false
			for _, line := range strings.Split(logs, "\n") {
				found = found || strings.Contains(line, "re-armed a job its dead process was working") && strings.Contains(line, "kind="+kind+" ")
			}
			if !found {
				t.Errorf("no %s job was re-armed after the kills", kind)
			}
		}
		t.Logf("%s: %d refund calls at the PG; %d jobs of a dead process re-armed", engine, f.pg.Calls(pgsim.APIRefund),
			strings.Count(logs, "re-armed a job its dead process was working"))
		starts := map[string]int{}
		for _, c := range f.cpo.Commands() {
			if c.Command == "START_SESSION" {
				ref, _ := c.Body["authorization_reference"].(string)
				starts[ref]++
			}
		}
		for _, pp := range []string{p1.ID, p3.ID} {
			if m, _ := f.payment(pp); starts[m.id] != 1 {
				t.Errorf("the CPO handled %d START_SESSION for payment %s, want 1", starts[m.id], m.id)
			}
		}
		if len(starts) != 2 {
			t.Errorf("START_SESSION for %v, want one for each of two payments", starts)
		}
	})
}

// audit checks the end state of every payment of an order at the PG and
// at the hub; cost is each payment's expected cost.
func (f *upiFixture) audit(engine store.Engine, pgOrderID string, cost map[string]int64) {
	t := f.t
	t.Helper()
	pays := f.pg.Payments(pgOrderID)
	if len(pays) != len(cost) {
		t.Errorf("the PG has %d payments of the order, want %d", len(pays), len(cost))
	}
	for _, pp := range pays {
		m, ok := f.payment(pp.ID)
		if !ok {
			t.Errorf("PG payment %s (₹%s, %s) has no payment at the hub", pp.ID, rupees(pp.Amount), pp.Status)
			continue
		}
		terminal := m.status == "SETTLED" || m.status == "REFUNDED" || m.attention != ""
		if !terminal {
			t.Errorf("payment %s is %s, neither terminal nor flagged for an operator", m.id, m.status)
		}
		if m.captured != pp.Amount || m.captured != m.cost+m.refunded+m.notRefundable-m.shortfall || m.reserved != m.refunded {
			t.Errorf("payment %s: captured %s, cost %s, refunded %s (reserved %s), not refundable %s, shortfall %s; the PG captured %s",
				m.id, rupees(m.captured), rupees(m.cost), rupees(m.refunded), rupees(m.reserved), rupees(m.notRefundable), rupees(m.shortfall), rupees(pp.Amount))
		}
		if want, ok := cost[pp.ID]; ok && m.cost != want {
			t.Errorf("payment %s cost %s, want %s", m.id, rupees(m.cost), rupees(want))
		}
		// Each refund at the PG is one of ours, by key, once; nothing was
		// refunded beyond the capture.
		var atPG int64
		byKey := map[string]int{}
		for _, r := range f.pg.Refunds(pp.ID) {
			byKey[r.Key]++
			if r.Status == "processed" {
				atPG += r.Amount
			}
		}
		if atPG != m.refunded || pp.AmountRefunded != m.refunded || atPG > pp.Amount {
			t.Errorf("payment %s: the PG refunded %s (its payment says %s), the hub says %s", m.id, rupees(atPG), rupees(pp.AmountRefunded), rupees(m.refunded))
		}
		rows, err := f.db.Read().Query(f.ctx, "SELECT refund_id, amount_paise, status FROM upi_refunds WHERE payment_id = $1", m.id)
		if err != nil {
			t.Fatal(err)
		}
		ours := 0
		for rows.Next() {
			var key, status string
			var amount int64
			if err := rows.Scan(&key, &amount, &status); err != nil {
				t.Fatal(err)
			}
			ours++
			if byKey[key] != 1 {
				t.Errorf("refund %s (₹%s, %s): the PG has %d refunds with its key, want 1", key, rupees(amount), status, byKey[key])
			}
		}
		rows.Close()
		if ours != len(byKey) {
			t.Errorf("payment %s: %d refunds at the hub, %d idempotency keys at the PG", m.id, ours, len(byKey))
		}
		t.Logf("%s: payment %s %s: captured ₹%s = cost ₹%s + refunded ₹%s + not refundable ₹%s − shortfall ₹%s; %d refund(s) at the PG",
			engine, m.id, m.status, rupees(m.captured), rupees(m.cost), rupees(m.refunded), rupees(m.notRefundable), rupees(m.shortfall), len(byKey))
	}
}

// report prints a measured recovery time and fails the test beyond
// resumeWithin.
func report(t *testing.T, engine store.Engine, what string, took time.Duration) {
	t.Helper()
	reportAfter(t, engine, what, "restart", took)
}

// reportAfter is report for work resumed after something else than a
// restart.
func reportAfter(t *testing.T, engine store.Engine, what, after string, took time.Duration) {
	t.Helper()
	line := fmt.Sprintf("%s %.2fs after %s", what, took.Seconds(), after)
	t.Logf("%s: %s", engine, line)
	fmt.Printf("crashtest %s: %s\n", engine, line)
	if took > resumeWithin {
		t.Errorf("%s: %s, want within %v", engine, line, resumeWithin)
	}
}

func rupees(paise int64) string { return fmt.Sprintf("%d.%02d", paise/100, paise%100) }
