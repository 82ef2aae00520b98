package upi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/upi/charger"
	"github.com/ocpihub/ocpihub/internal/upi/intake"
	"github.com/ocpihub/ocpihub/internal/upi/orders"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
	"github.com/ocpihub/ocpihub/internal/upi/smsreceipt"
)

// harness drives the payment state machine by hand: the real Service on a
// real database (either engine), with an in-memory PG, CPO and directory,
// a fake clock, and a job queue the test works itself — it reads every job
// the service commits, keeps it, and runs the worker when the test says so.
// Nothing runs in the background, so a test is as fast as the database and
// cannot time out on a busy machine; the order of work is the test's
// choice (and its random generator's).
type harness struct {
	t   testing.TB
	ctx context.Context
	db  *store.DB
	jc  *jobs.Client
	s   *Service
	clk *clock.Fake
	pg  *fakePG
	cpo *fakeCPO
	em  *faultyEmitter

	queue []*hjob
	// jobSeq numbers the jobs enqueued (InsertTx). qmu guards it and the
	// queue's appends from transactions committing at once (the
	// concurrent settlement tests); the rest of the harness runs on one
	// goroutine.
	jobSeq int64
	qmu    sync.Mutex
	// started is when the property test's run began.
	started time.Time
	// actions are what the other parties will do next, in any order.
	actions []action
	// holdWebhooks keeps the PG's webhooks in its outbox (lost for now);
	// dupWebhooks is the chance that a webhook comes two or three times.
	holdWebhooks bool
	dupWebhooks  float64
	settling     bool
	// jobRuns and actionRuns count the work done, for the log.
	jobRuns, actionRuns int
	// dropped names jobs that used up their attempts (River discards them).
	dropped []string
	// rescue is the chance that a job that succeeded runs again, as after
	// a crash between its commit and River marking it completed.
	rescue float64
	rnd    *rand.Rand
	// phone is the number new orders give for the receipt's SMS.
	phone string
}

// hjob is a job taken from River's table.
type hjob struct {
	id      int64
	kind    string
	args    []byte
	attempt int
	due     time.Time
}

const (
	hQRRef       = "KORA-E1"
	hMaxAttempts = 25
)

func newHarness(t testing.TB, engine store.Engine) *harness {
	t.Helper()
	// No deadline of its own: the test's -timeout bounds a run, and under
	// the race detector on a busy machine the floor of the property test
	// takes minutes.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h := &harness{t: t, ctx: ctx, db: storetest.Open(t, engine),
		clk: clock.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)), rnd: rand.New(rand.NewPCG(1, 2))}
	h.pg = &fakePG{h: h, payments: map[string]*pg.Payment{}, orders: map[string]*pg.Order{}, refunds: map[string]*pg.Refund{},
		byKey: map[string]string{}, plan: map[string]refundFault{}}
	h.cpo = &fakeCPO{h: h}
	h.em = &faultyEmitter{h: h}
	var err error
	if h.jc, err = jobs.New(h.db, jobs.Config{InsertOnly: true, Time: h.clk}); err != nil {
		t.Fatal(err)
	}
	h.s = New(Config{PublicURL: "https://hub.example", EMSPCountryCode: "IN", EMSPPartyID: "OHE", EMSPName: "ocpihub",
		PaymentWindow: 2 * time.Minute, SessionDeadline: 5 * time.Minute, PollInterval: 5 * time.Second, RetryBase: 2 * time.Second},
		Deps{DB: h.db, Jobs: h.jc, Gateway: h.pg, Dir: fakeDir{}, Commands: h.cpo, Events: h.em, Clock: h.clk,
			Registry: prometheus.NewRegistry()})
	h.s.jobs = h
	if _, err := h.s.CreateQR(ctx, qrmap.QRCreate{QRRef: hQRRef, TenantID: "IN*CPO", LocationID: "LOC1", EVSEUID: "E1", ConnectorID: "1"}); err != nil {
		t.Fatal(err)
	}
	return h
}

// InsertTx is the service's job queue in the harness: a job joins the
// harness's queue when the transaction that enqueued it commits, and never
// when it rolls back, as with River's InsertTx. (The jobs skip River's
// table: inserting there and reading them back cost more than the rest of
// a run.)
func (h *harness) InsertTx(_ context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	encoded, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	due := h.clk.Now()
	if opts != nil && !opts.ScheduledAt.IsZero() {
		due = opts.ScheduledAt
	}
	h.qmu.Lock()
	h.jobSeq++
	j := &hjob{id: h.jobSeq, kind: args.Kind(), args: encoded, due: due}
	h.qmu.Unlock()
	tx.AfterCommit(func() {
		h.qmu.Lock()
		h.queue = append(h.queue, j)
		h.qmu.Unlock()
	})
	return &rivertype.JobInsertResult{Job: &rivertype.JobRow{ID: j.id, Kind: j.kind, EncodedArgs: encoded, ScheduledAt: due}}, nil
}

// noRiverJobs fails the test when a job reached River's table: something
// enqueued work around the service's queue, which the harness would never
// run.
func (h *harness) noRiverJobs() {
	h.t.Helper()
	var n int64
	if err := h.db.Read().QueryRow(h.ctx, "SELECT COUNT(*) FROM river_job").Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	if n != 0 {
		h.t.Fatalf("%d jobs in River's table, enqueued around the service's job queue", n)
	}
}

// due returns the indexes of the jobs due now.
func (h *harness) due() []int {
	var out []int
	now := h.clk.Now()
	for i, j := range h.queue {
		if !j.due.After(now) {
			out = append(out, i)
		}
	}
	return out
}

// runJob takes job i off the queue and works it as River would: done,
// snoozed, or retried with the worker's backoff; after its last attempt it
// is dropped (and named in h.dropped).
func (h *harness) runJob(i int) {
	h.t.Helper()
	j := h.queue[i]
	h.queue = slices.Delete(h.queue, i, i+1)
	j.attempt++
	h.jobRuns++
	row := &rivertype.JobRow{ID: j.id, Kind: j.kind, EncodedArgs: j.args, Attempt: j.attempt, MaxAttempts: hMaxAttempts,
		ScheduledAt: j.due, Queue: jobs.QueueMoney}
	err := h.work(row)
	now := h.clk.Now()
	var snooze *rivertype.JobSnoozeError
	switch {
	case err == nil:
		if h.rescue > 0 && h.rnd.Float64() < h.rescue {
			j.due = now.Add(3 * time.Minute) // rescued after the job timeout
			h.queue = append(h.queue, j)
		}
		return
	case errors.As(err, &snooze):
		j.due = now.Add(snooze.Duration)
	case j.attempt >= hMaxAttempts:
		h.dropped = append(h.dropped, fmt.Sprintf("%s %s: %v", j.kind, j.args, err))
		return
	default:
		j.due = h.nextRetry(row)
	}
	h.queue = append(h.queue, j)
}

func (h *harness) nextRetry(row *rivertype.JobRow) time.Time {
	switch row.Kind {
	case startArgs{}.Kind():
		return (&startWorker{s: h.s}).NextRetry(&river.Job[startArgs]{JobRow: row})
	case refunds.Args{}.Kind():
		return (&refundWorker{s: h.s}).NextRetry(&river.Job[refunds.Args]{JobRow: row})
	case notifyArgs{}.Kind():
		return (&notifyWorker{s: h.s}).NextRetry(&river.Job[notifyArgs]{JobRow: row})
	}
	return jobs.Backoff{Time: h.clk}.NextRetry(row)
}

func (h *harness) work(row *rivertype.JobRow) error {
	s := h.s
	switch row.Kind {
	case intake.Args{}.Kind():
		return workAs(h.ctx, s.webhookWorker(), row)
	case pollArgs{}.Kind():
		return workAs(h.ctx, jobs.Func(s.pollPayment), row)
	case startArgs{}.Kind():
		return workAs(h.ctx, &startWorker{s: s}, row)
	case deadlineArgs{}.Kind():
		return workAs(h.ctx, jobs.Func(s.checkDeadline), row)
	case refunds.Args{}.Kind():
		return workAs(h.ctx, &refundWorker{s: s}, row)
	case notifyArgs{}.Kind():
		return workAs(h.ctx, &notifyWorker{s: s}, row)
	case orders.CheckArgs{}.Kind():
		return workAs(h.ctx, s.orderCheckWorker(), row)
	case smsreceipt.Args{}.Kind():
		return workAs(h.ctx, s.texts.Worker(), row)
	case erasePhonesArgs{}.Kind():
		return workAs(h.ctx, s.erasePhonesWorker(), row)
	}
	h.t.Fatalf("no worker for job kind %s", row.Kind)
	return nil
}

func workAs[T river.JobArgs](ctx context.Context, w river.Worker[T], row *rivertype.JobRow) error {
	var args T
	if err := json.Unmarshal(row.EncodedArgs, &args); err != nil {
		return err
	}
	return w.Work(ctx, &river.Job[T]{JobRow: row, Args: args})
}

// drain works every job that is due now, in queue order, until none is.
func (h *harness) drain() {
	for range 10_000 {
		d := h.due()
		if len(d) == 0 {
			return
		}
		h.runJob(d[0])
	}
	h.t.Fatal("drain: the jobs never settle")
}

// settle works jobs and the actions of the other parties (the PG's
// webhooks and refund settlements, the CPO's results, sessions and CDRs) in
// a random order, moving the clock to the next due job whenever nothing is
// due, until nothing is left to do.
func (h *harness) settle() {
	h.t.Helper()
	for range 20_000 {
		if h.step() {
			continue
		}
		if len(h.queue) == 0 {
			return
		}
		next := h.queue[0].due
		for _, j := range h.queue {
			if j.due.Before(next) {
				next = j.due
			}
		}
		h.clk.Set(next)
	}
	h.t.Fatal("settle: the payments never settle")
}

// step works one due job or one action, picked at random, and reports
// whether there was one.
func (h *harness) step() bool {
	h.t.Helper()
	h.actions = append(h.actions, h.pgActions()...)
	d := h.due()
	n := len(d) + len(h.actions)
	if n == 0 {
		return false
	}
	k := h.rnd.IntN(n)
	if k < len(d) {
		h.runJob(d[k])
		return true
	}
	k -= len(d)
	a := h.actions[k]
	h.actions = slices.Delete(h.actions, k, k+1)
	h.actionRuns++
	h.do(a)
	h.actions = append(h.actions, a.then...)
	return true
}

// pgActions turns what the PG has to say into actions: each webhook in
// the outbox (a few copies of some, when h.dupWebhooks says so; none while
// h.holdWebhooks) and, when refunds are pending, their settlement.
func (h *harness) pgActions() []action {
	var out []action
	if !h.holdWebhooks {
		for _, ev := range h.pg.takeOutbox() {
			copies := 1
			if h.dupWebhooks > 0 && h.rnd.Float64() < h.dupWebhooks {
				copies = 2 + h.rnd.IntN(2)
			}
			for range copies {
				out = append(out, action{name: "webhook " + ev.Type + " " + ev.PaymentID, fn: func() error { return h.deliver(ev) }})
			}
		}
	}
	if !h.settling && h.pg.pendingRefunds() > 0 {
		h.settling = true
		out = append(out, action{name: "the PG settles refunds", fn: func() error {
			h.settling = false
			h.pg.settleRefunds()
			return nil
		}})
	}
	return out
}

// action is something a party outside the hub does: the PG delivers a
// webhook or finishes a refund, the CPO reports a command result, a session
// or a CDR, the operator refunds.
type action struct {
	name string
	fn   func() error
	// then are the actions this one makes possible (a session's end after
	// its start).
	then []action
}

// do runs an action, retrying it as its sender would (a partner's push is
// retried until the hub answers).
func (h *harness) do(a action) {
	h.t.Helper()
	var err error
	for range 50 {
		if err = a.fn(); err == nil {
			break
		}
	}
	if err != nil {
		h.t.Fatalf("%s: %v", a.name, err)
	}
}

// faultyEmitter records events and, while armed, fails a share of them: a
// transaction that fails half-way, as in a crash, and is retried by its job
// or its sender.
type faultyEmitter struct {
	h        *harness
	failRate float64
}

var errInjected = errors.New("injected failure (a crash half-way through the transaction)")

func (e *faultyEmitter) Emit(_ context.Context, _ *store.Tx, ev event.Event) error {
	if e.failRate > 0 && e.h.rnd.Float64() < e.failRate {
		return errInjected
	}
	return nil
}

// fakeDir is a directory with one available connector.
type fakeDir struct{}

func (fakeDir) Connector(_ context.Context, ref charger.ConnectorRef) (*charger.Connector, error) {
	return &charger.Connector{ConnectorRef: charger.ConnectorRef{CountryCode: "IN", PartyID: "CPO", LocationID: ref.LocationID, EVSEUID: ref.EVSEUID,
		ConnectorID: ref.ConnectorID}, LocationName: "Koramangala Hub", Status: "AVAILABLE", Capabilities: []string{"REMOTE_START_STOP_CAPABLE"}}, nil
}

func (fakeDir) Owner(context.Context, string) (string, string, error) { return "IN", "CPO", nil }

// refundFault is what the PG does with a refund.
type refundFault struct {
	retryable int  // answers 5xx this many times first
	refuse    bool // refuses it for good (4xx)
	lose      bool // makes the refund, but the answer is lost (timeout) once
	pending   bool // accepts it pending; the harness settles it later
	fail      bool // a pending refund ends failed
}

// fakePG is an in-memory payment gateway: orders, payments moved by the
// test, refunds with idempotency keys, and webhooks put in an outbox.
type fakePG struct {
	h        *harness
	mu       sync.Mutex
	seq      int
	orders   map[string]*pg.Order
	payments map[string]*pg.Payment
	refunds  map[string]*pg.Refund // by the PG's id
	byKey    map[string]string     // idempotency key → the PG's id
	// plan says what happens to refunds of a payment (by pg payment id);
	// refunds of other payments are processed at once.
	plan map[string]refundFault
	// fetchDown makes FetchPayment and OrderPayments fail (5xx) this many
	// times.
	fetchDown int
	// outbox holds webhooks not yet delivered.
	outbox []pg.Event
	// overRefund records refunds beyond the capture (a double refund).
	overRefund []string
}

func (f *fakePG) id(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s_%06d", prefix, f.seq)
}

func (f *fakePG) CreateOrder(_ context.Context, req pg.OrderRequest) (*pg.Order, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := &pg.Order{ID: f.id("order"), Amount: req.Amount, Receipt: req.Receipt, Status: pg.OrderCreated, Notes: req.Notes, CreatedAt: f.h.clk.Now()}
	f.orders[o.ID] = o
	c := *o
	return &c, nil
}

func (f *fakePG) FetchOrder(_ context.Context, id string) (*pg.Order, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.orders[id]
	if !ok {
		return nil, &pg.Error{Op: "fetch order", Kind: pg.KindNotFound}
	}
	c := *o
	return &c, nil
}

func (f *fakePG) CreateUPIQR(_ context.Context, req pg.QRRequest) (*pg.QR, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &pg.QR{ID: f.id("qr"), Intent: "upi://pay?pa=hub@pg", ImageURL: "https://pg.example/qr", Amount: req.Amount, Status: "active"}, nil
}

func (f *fakePG) FetchPayment(_ context.Context, id string) (*pg.Payment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fetchDown > 0 {
		f.fetchDown--
		return nil, &pg.Error{Op: "fetch payment", Kind: pg.KindServer, HTTPStatus: 503}
	}
	p, ok := f.payments[id]
	if !ok {
		return nil, &pg.Error{Op: "fetch payment", Kind: pg.KindNotFound, HTTPStatus: 404}
	}
	c := *p
	return &c, nil
}

func (f *fakePG) OrderPayments(_ context.Context, orderID string) ([]pg.Payment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fetchDown > 0 {
		f.fetchDown--
		return nil, &pg.Error{Op: "order payments", Kind: pg.KindServer, HTTPStatus: 503}
	}
	var out []pg.Payment
	for _, p := range f.payments {
		if p.OrderID == orderID {
			out = append(out, *p)
		}
	}
	slices.SortFunc(out, func(a, b pg.Payment) int { return cmpString(a.ID, b.ID) })
	return out, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (f *fakePG) Refund(_ context.Context, req pg.RefundRequest) (*pg.Refund, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id, ok := f.byKey[req.RefundID]; ok {
		r := f.refunds[id]
		if r.Amount.Paise != req.Paise {
			return nil, &pg.Error{Op: "refund", Kind: pg.KindRejected, HTTPStatus: 400, Description: "the key was used with another amount"}
		}
		c := *r
		return &c, nil
	}
	p, ok := f.payments[req.PaymentID]
	if !ok {
		return nil, &pg.Error{Op: "refund", Kind: pg.KindNotFound, HTTPStatus: 404}
	}
	fault := f.plan[p.ID]
	if fault.retryable > 0 {
		fault.retryable--
		f.plan[p.ID] = fault
		return nil, &pg.Error{Op: "refund", Kind: pg.KindServer, HTTPStatus: 502}
	}
	if fault.refuse {
		return nil, &pg.Error{Op: "refund", Kind: pg.KindRejected, HTTPStatus: 400, Code: "BAD_REQUEST_ERROR", Description: "refunds are blocked on this payment"}
	}
	if p.Status != pg.PaymentCaptured && p.Status != pg.PaymentRefunded || req.Paise < 100 {
		return nil, &pg.Error{Op: "refund", Kind: pg.KindRejected, HTTPStatus: 400, Description: "not refundable"}
	}
	var taken int64
	for _, r := range f.refunds {
		if r.PaymentID == p.ID && r.Status != pg.RefundFailed {
			taken += r.Amount.Paise
		}
	}
	if taken+req.Paise > p.Amount.Paise {
		// A real PG refuses this; the test wants to know it was asked.
		f.overRefund = append(f.overRefund, fmt.Sprintf("%s: %d on top of %d of %d", req.RefundID, req.Paise, taken, p.Amount.Paise))
		return nil, &pg.Error{Op: "refund", Kind: pg.KindRejected, HTTPStatus: 400, Description: "the refund exceeds the captured amount"}
	}
	r := &pg.Refund{ID: f.id("rfnd"), PaymentID: p.ID, Amount: pg.Amount{Paise: req.Paise, Currency: p.Amount.Currency},
		Status: pg.RefundProcessed, RefundID: req.RefundID, CreatedAt: f.h.clk.Now()}
	if fault.pending {
		r.Status = pg.RefundPending
	}
	f.refunds[r.ID] = r
	f.byKey[req.RefundID] = r.ID
	if r.Status == pg.RefundProcessed {
		f.refundEvent(r)
	}
	if fault.lose {
		fault.lose = false
		f.plan[p.ID] = fault
		return nil, &pg.Error{Op: "refund", Kind: pg.KindTimeout}
	}
	c := *r
	return &c, nil
}

// refundEvent puts the refund's webhook in the outbox.
func (f *fakePG) refundEvent(r *pg.Refund) {
	c := *r
	typ := "refund." + string(r.Status)
	f.outbox = append(f.outbox, pg.Event{ID: f.id("evt"), Form: pg.FormRazorpay, Type: typ, Kind: pg.EventRefund, PaymentID: r.PaymentID,
		Refund: &c, PayloadSigned: true})
}

// pendingRefunds counts the refunds the PG has not finished.
func (f *fakePG) pendingRefunds() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.refunds {
		if r.Status == pg.RefundPending {
			n++
		}
	}
	return n
}

// settleRefunds finishes the pending refunds at the PG (processed, or
// failed when the plan says so) and reports how many it finished.
func (f *fakePG) settleRefunds() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]string, 0, len(f.refunds))
	for id := range f.refunds {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	n := 0
	for _, id := range ids {
		r := f.refunds[id]
		if r.Status != pg.RefundPending {
			continue
		}
		r.Status = pg.RefundProcessed
		if f.plan[r.PaymentID].fail {
			r.Status = pg.RefundFailed
		}
		f.refundEvent(r)
		n++
	}
	return n
}

func (f *fakePG) FetchRefund(_ context.Context, id string) (*pg.Refund, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.refunds[id]
	if !ok {
		return nil, &pg.Error{Op: "fetch refund", Kind: pg.KindNotFound, HTTPStatus: 404}
	}
	c := *r
	return &c, nil
}

// VerifyWebhook reads the harness's own encoding of an event (the JSON of
// pg.Event): signatures are pg's business and tested there.
func (f *fakePG) VerifyWebhook(_ http.Header, body []byte) (*pg.Event, error) {
	var ev pg.Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("%w: %v", pg.ErrMalformed, err)
	}
	return &ev, nil
}

// attempt starts a payment attempt on an order.
func (f *fakePG) attempt(orderID string, amount pg.Amount) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := &pg.Payment{ID: f.id("pay"), OrderID: orderID, Amount: amount, Status: pg.PaymentCreated, Method: "upi", VPA: "driver@okpg",
		CreatedAt: f.h.clk.Now()}
	f.payments[p.ID] = p
	return p.ID
}

// move sets a payment's state at the PG and puts its webhook in the
// outbox ("pending" notifies the created state).
func (f *fakePG) move(paymentID string, to pg.PaymentStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.payments[paymentID]
	if to.Rank() > p.Status.Rank() || to == pg.PaymentCreated {
		p.Status = to
	}
	if to == pg.PaymentCaptured {
		p.Captured = true
	}
	ev := pg.Event{ID: f.id("evt"), Form: pg.FormRazorpay, Type: "payment." + string(to), Kind: pg.EventPayment, PaymentID: p.ID,
		OrderID: p.OrderID, Status: to, Amount: p.Amount, PayerVPA: p.VPA, PayloadSigned: true}
	if to == pg.PaymentCreated {
		ev.Type = "payment.pending"
	}
	if to == pg.PaymentFailed {
		ev.ErrorCode, ev.ErrorDescription = "BAD_REQUEST_ERROR", "the payer declined"
	}
	f.outbox = append(f.outbox, ev)
}

// takeOutbox returns the undelivered webhooks and empties the outbox.
func (f *fakePG) takeOutbox() []pg.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.outbox
	f.outbox = nil
	return out
}

// deliver hands a webhook to the hub as its HTTP handler does.
func (h *harness) deliver(ev pg.Event) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	_, err = h.s.ReceiveWebhook(h.ctx, http.Header{}, body)
	return err
}

// fakeCPO answers START_SESSION as the current plan says and queues what
// the CPO does next (the result, the session, the CDR) as actions.
type fakeCPO struct {
	h    *harness
	mu   sync.Mutex
	next func(req StartRequest, attempt int) (string, *ocpi.CommandResponse, error)
	// starts counts, per payment, the START_SESSION the CPO received.
	starts   map[string]int
	attempts map[string]int
}

func (c *fakeCPO) StartSession(_ context.Context, req StartRequest) (string, *ocpi.CommandResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.starts == nil {
		c.starts, c.attempts = map[string]int{}, map[string]int{}
	}
	c.attempts[req.PaymentID]++
	if c.next == nil {
		return "", nil, errors.New("no CPO")
	}
	id, resp, err := c.next(req, c.attempts[req.PaymentID])
	if err == nil || errors.Is(err, ErrStartPending) {
		c.starts[req.PaymentID]++
	}
	return id, resp, err
}

// session is the CPO's session for a payment, in status.
func session(req StartRequest, status string, start, now time.Time, cost string) *ocpi.Session {
	s := &ocpi.Session{CountryCode: "IN", PartyID: "CPO", ID: "S-" + req.PaymentID, StartDateTime: ocpi.NewDateTime(start),
		KWh: ocpi.NewNumber("5"), AuthMethod: "COMMAND", AuthorizationReference: req.PaymentID, LocationID: req.Start.LocationID,
		EVSEUID: req.Start.EVSEUID, ConnectorID: req.Start.ConnectorID, Currency: "INR", Status: status, LastUpdated: ocpi.NewDateTime(now),
		CdrToken: &ocpi.CdrToken{CountryCode: "IN", PartyID: "OHE", UID: req.Start.Token.UID, Type: req.Start.Token.Type, ContractID: req.PaymentID}}
	if status == "COMPLETED" {
		end := ocpi.NewDateTime(now)
		s.EndDateTime = &end
		s.TotalCost = &ocpi.Price{ExclVAT: ocpi.NewNumber(cost)}
	}
	return s
}

func cdrOf(req StartRequest, start, end time.Time, cost string) *ocpi.CDR {
	return &ocpi.CDR{CountryCode: "IN", PartyID: "CPO", ID: "CDR-" + req.PaymentID, StartDateTime: ocpi.NewDateTime(start),
		EndDateTime: ocpi.NewDateTime(end), SessionID: "S-" + req.PaymentID, AuthMethod: "COMMAND", AuthorizationReference: req.PaymentID,
		CdrToken: &ocpi.CdrToken{CountryCode: "IN", PartyID: "OHE", UID: req.Start.Token.UID, Type: req.Start.Token.Type, ContractID: req.PaymentID},
		Currency: "INR", TotalCost: &ocpi.Price{ExclVAT: ocpi.NewNumber(cost)}, TotalEnergy: ocpi.NewNumber("10"), TotalTime: ocpi.NewNumber("1"),
		LastUpdated: ocpi.NewDateTime(end)}
}

// sessionChanged and cdrStored store what the CPO pushed as the session
// and CDR services do: the payment's hooks run in their transaction.
func (h *harness) sessionChanged(sess *ocpi.Session) error {
	return h.db.InTx(h.ctx, func(ctx context.Context, tx *store.Tx) error { return h.s.SessionChanged(ctx, tx, sess) })
}

func (h *harness) cdrStored(cdr *ocpi.CDR) error {
	return h.db.InTx(h.ctx, func(ctx context.Context, tx *store.Tx) error { return h.s.CDRStored(ctx, tx, cdr) })
}

// paymentByPG returns the payment row of a PG payment, nil if there is none.
func (h *harness) paymentByPG(pgPaymentID string) *paymentrow.Payment {
	h.t.Helper()
	p, err := paymentrow.Scan(h.db.Read().QueryRow(h.ctx, "SELECT "+paymentrow.Columns+" FROM upi_payments WHERE pg_payment_id = $1", pgPaymentID))
	if errors.Is(err, store.ErrNoRows) {
		return nil
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

// refundsOf returns the refunds of a payment.
func (h *harness) refundsOf(paymentID string) []*refunds.Refund {
	h.t.Helper()
	rows, err := h.db.Read().Query(h.ctx, "SELECT "+refunds.Columns+" FROM upi_refunds WHERE payment_id = $1 ORDER BY pk", paymentID)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []*refunds.Refund
	for rows.Next() {
		r, err := refunds.Scan(rows)
		if err != nil {
			h.t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		h.t.Fatal(err)
	}
	return out
}
