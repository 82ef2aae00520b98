package command_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// bundle is a hub with a CPO (LOC1 with EVSEs E1, E2), a second CPO and two
// eMSPs registered; EM1 has pushed its token TOK1.
type bundle struct {
	h      *hubtest.Hub
	cpo    *sim.CPO
	cpo2   *sim.CPO
	emsp   *sim.EMSP
	emsp2  *sim.EMSP
	events *hubtest.Recorder
	clock  *clock.Fake
	ctx    context.Context
	token  map[string]any
}

// options builds the hub options; fake adds a fake clock that drives the
// hub and its job queue (command timeouts, relay retries).
func options(fake bool) func(o *hubtest.Options) {
	return func(o *hubtest.Options) {
		o.Events = hubtest.NewRecorder()
		if fake {
			o.Clock = clock.NewFake(time.Now())
		}
		o.Config = func(c *app.Config) {
			c.PushBackoff = 20 * time.Millisecond
			c.PushMaxAttempts = 5
			c.ForwardTimeout = time.Second
			c.CommandTimeoutMargin = 5 * time.Second
			c.CommandTimeout = 20 * time.Second
			c.SyncInterval = 0
		}
	}
}

func setup(t *testing.T, h *hubtest.Hub) *bundle {
	t.Helper()
	b := &bundle{h: h, ctx: hubtest.Ctx(t, 90*time.Second), events: h.Events.(*hubtest.Recorder)}
	b.clock, _ = h.Clock.(*clock.Fake)
	var err error
	reg := func(p *sim.Platform) {
		t.Cleanup(p.Close)
		h.Register(t, p)
	}
	if b.cpo, err = sim.StartCPO("CPO One", "IN", "CP1", hubtest.Logger()); err != nil {
		t.Fatal(err)
	}
	reg(b.cpo.Platform)
	if b.cpo2, err = sim.StartCPO("CPO Two", "IN", "CP2", hubtest.Logger()); err != nil {
		t.Fatal(err)
	}
	reg(b.cpo2.Platform)
	if b.emsp, err = sim.StartEMSP("eMSP One", "DE", "EM1", hubtest.Logger()); err != nil {
		t.Fatal(err)
	}
	reg(b.emsp.Platform)
	if b.emsp2, err = sim.StartEMSP("eMSP Two", "FR", "EM2", hubtest.Logger()); err != nil {
		t.Fatal(err)
	}
	reg(b.emsp2.Platform)
	if err := b.cpo.PublishLocation(b.ctx, "LOC1", "E1", "E2"); err != nil {
		t.Fatal(err)
	}
	b.token = b.emsp.NewToken("TOK1", "APP_USER", "NEVER")
	if _, err := b.emsp.PutToken(b.ctx, b.token); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.cpo.Wait)
	return b
}

func (b *bundle) startBody(ref string) map[string]any {
	return map[string]any{"token": b.token, "location_id": "LOC1", "evse_uid": "E1", "connector_id": "1", "authorization_reference": ref}
}

func mustStatus(t *testing.T, resp *ocpiclient.Response, err error, httpStatus, code int) *ocpiclient.Response {
	t.Helper()
	if resp == nil {
		t.Fatalf("call failed: %v", err)
	}
	if resp.HTTPStatus != httpStatus || resp.Envelope == nil || resp.Envelope.StatusCode != code {
		t.Fatalf("got HTTP %d %s, want HTTP %d status_code %d", resp.HTTPStatus, resp.Body, httpStatus, code)
	}
	return resp
}

// enveloped decodes the envelope of a raw answer.
func enveloped(resp *ocpiclient.Response) *ocpiclient.Response {
	resp.Envelope, _ = ocpi.DecodeEnvelope(resp.Body)
	return resp
}

func errorField(resp *ocpiclient.Response) string {
	if resp.Envelope == nil || resp.Envelope.Error == nil || resp.Envelope.Error.Details == nil {
		return ""
	}
	return resp.Envelope.Error.Details.Field
}

func result(t *testing.T, resp *ocpiclient.Response) string {
	t.Helper()
	var r struct {
		Result  string `json:"result"`
		Timeout *int   `json:"timeout"`
	}
	if err := json.Unmarshal(resp.Envelope.Data, &r); err != nil || r.Timeout == nil {
		t.Fatalf("not a CommandResponse: %s", resp.Body)
	}
	return r.Result
}

// commandID returns the hub's id of the n-th command the CPO received: the
// last segment of the response_url the hub gave it.
func (b *bundle) commandID(t *testing.T, n int) (id, responseURL string) {
	t.Helper()
	cmds := b.cpo.Commands()
	if len(cmds) <= n {
		t.Fatalf("the CPO received %d commands", len(cmds))
	}
	responseURL, _ = cmds[n].Body["response_url"].(string)
	return responseURL[strings.LastIndex(responseURL, "/")+1:], responseURL
}

// record reads a command through the admin API.
func (b *bundle) record(t *testing.T, id string) command.Record {
	t.Helper()
	var rec command.Record
	b.h.Admin(t, http.MethodGet, "/admin/commands/"+id, nil, &rec)
	return rec
}

// eventually waits, with the test's deadline, until cond holds (a state in
// the hub's database), checking every 20 ms.
func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}
