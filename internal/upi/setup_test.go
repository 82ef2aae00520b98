package upi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// bundle is a hub with a registered CPO that published one location (two
// EVSEs with one connector each, tariff T1) and a PG simulator that outlives
// hub restarts.
type bundle struct {
	h      *hubtest.Hub
	cpo    *sim.CPO
	pg     *pgsim.Server
	events *hubtest.Recorder
	ctx    context.Context
}

const (
	cpoCC  = "IN"
	cpoPID = "CPO"
	locID  = "LOC1"
)

// setup starts the bundle on engine; tweak edits the hub's configuration.
func setup(t *testing.T, engine store.Engine, tweak ...func(*app.Config)) *bundle {
	t.Helper()
	return setupAt(t, engine, nil, tweak...)
}

// setupAt is setup with the hub on clk (nil: the real clock).
func setupAt(t *testing.T, engine store.Engine, clk clock.Clock, tweak ...func(*app.Config)) *bundle {
	t.Helper()
	b := startBundle(t, engine, clk, 2*time.Minute, tweak...)
	b.cpo = hubtest.Add(t, b.h, sim.StartCPO, "CPO One", cpoCC, cpoPID)
	b.publish(t)
	return b
}

// startBundle starts the payment gateway and the hub on engine, with a
// test budget of budget, before any partner is registered.
func startBundle(t *testing.T, engine store.Engine, clk clock.Clock, budget time.Duration, tweak ...func(*app.Config)) *bundle {
	t.Helper()
	b := &bundle{ctx: hubtest.Ctx(t, budget), events: hubtest.NewRecorder()}
	var err error
	if b.pg, err = pgsim.Start(pgsim.Options{Logger: hubtest.Logger()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.pg.Close)
	b.h = hubtest.Start(t, engine, func(o *hubtest.Options) {
		o.Events = b.events
		o.Clock = clk
		o.Config = func(c *app.Config) {
			c.PGBaseURL, c.PGKeyID, c.PGKeySecret, c.PGWebhookSecret = b.pg.URL(), b.pg.KeyID(), b.pg.KeySecret(), pgsim.DefaultWebhookSecret
			c.SyncInterval = 0
			c.UPIPollInterval = 50 * time.Millisecond
			c.UPIRetryBase = 20 * time.Millisecond
			c.PushBackoff = 20 * time.Millisecond
			c.ForwardTimeout = 2 * time.Second
			c.CommandTimeout = 2 * time.Second
			c.CommandTimeoutMargin = time.Second
			for _, fn := range tweak {
				fn(c)
			}
		}
	})
	b.pg.SetWebhook(b.h.PublicURL()+app.UPIWebhookPath, pgsim.FormRazorpay)
	return b
}

// publish has the bundle's CPO push tariff T1 and location LOC1 with two
// available EVSEs.
func (b *bundle) publish(t *testing.T) {
	t.Helper()
	if err := b.cpo.PutTariff(b.ctx, "T1", tariffJSON("T1")); err != nil {
		t.Fatal(err)
	}
	if err := b.cpo.PutLocation(b.ctx, locID, locationJSON(locID, "E1:AVAILABLE", "E2:AVAILABLE")); err != nil {
		t.Fatal(err)
	}
}

// each runs fn on both engines as parallel subtests, each with its own
// bundle.
func each(t *testing.T, fn func(t *testing.T, b *bundle), tweak ...func(*app.Config)) {
	t.Helper()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		fn(t, setup(t, engine, tweak...))
	})
}

// eachOnTheHour is each with the hub on a fake clock at the top of the next
// hour: the minute and hour windows of the rate limits start together, and
// the job queue stays near real time.
func eachOnTheHour(t *testing.T, fn func(t *testing.T, b *bundle, clk *clock.Fake)) {
	t.Helper()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		clk := clock.NewFake(time.Now().UTC().Truncate(time.Hour).Add(time.Hour))
		fn(t, setupAt(t, engine, clk), clk)
	})
}

func locationJSON(id string, evses ...string) map[string]any {
	var list []any
	for _, e := range evses {
		uid, status, _ := strings.Cut(e, ":")
		list = append(list, map[string]any{"uid": uid, "evse_id": "IN*CPO*E" + uid, "status": status, "last_updated": hubtest.Stamp(0),
			"capabilities": []any{"REMOTE_START_STOP_CAPABLE"},
			"connectors": []any{map[string]any{"id": "1", "standard": "IEC_62196_T2", "format": "SOCKET", "power_type": "AC_3_PHASE",
				"max_voltage": 230, "max_amperage": 32, "tariff_ids": []any{"T1"}, "last_updated": hubtest.Stamp(0)}}})
	}
	return map[string]any{
		"country_code": cpoCC, "party_id": cpoPID, "id": id, "publish": true,
		"name": "Koramangala Hub", "address": "80 Feet Road 12", "city": "Bengaluru", "country": "IND",
		"coordinates": map[string]any{"latitude": "12.93520", "longitude": "77.62450"},
		"time_zone":   "Asia/Kolkata", "last_updated": hubtest.Stamp(0), "evses": list,
	}
}

func tariffJSON(id string) map[string]any {
	return hubtest.Tariff(cpoCC, cpoPID, id, hubtest.Stamp(0))
}

// data decodes the data of an answer.
func data[T any](t *testing.T, resp *ocpiclient.Response) T {
	t.Helper()
	var v T
	if resp.Envelope == nil {
		t.Fatalf("no envelope: HTTP %d %s", resp.HTTPStatus, resp.Body)
	}
	if err := json.Unmarshal(resp.Envelope.Data, &v); err != nil {
		t.Fatalf("data: %v: %s", err, resp.Body)
	}
	return v
}

// badRequest is a request body an endpoint refuses, with the answer
// wantError expects: HTTP status, status_code and the field it names.
type badRequest struct {
	what  string
	body  any
	http  int
	code  int
	field string
}

const upiBase = "/ocpi/2.2.1/payments/upi"

// get fetches a hub URL without credentials (pages).
func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
