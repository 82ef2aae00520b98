package command_test

import (
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
)

// bundle is a hub with a CPO (LOC1 with EVSEs E1, E2), a second CPO and two
// eMSPs registered; EM1 has pushed its token TOK1.
type bundle struct {
	*hubtest.Bundle
	clock *clock.Fake
	token map[string]any
}

// options builds the hub options; fake adds a fake clock that drives the
// hub and its job queue (command timeouts, relay retries).
func options(fake bool) func(o *hubtest.Options) {
	configure := hubtest.Configure(true, func(c *app.Config) {
		c.PushMaxAttempts = 5
		c.ForwardTimeout = time.Second
		c.CommandTimeoutMargin = 5 * time.Second
		c.CommandTimeout = 20 * time.Second
	})
	return func(o *hubtest.Options) {
		configure(o)
		if fake {
			o.Clock = clock.NewFake(time.Now())
		}
	}
}

// each runs fn in parallel on each engine, on a bundle of a hub started
// with options(false) and then opts.
func each(t *testing.T, fn func(*testing.T, *bundle), opts ...func(*hubtest.Options)) {
	t.Parallel()
	hubtest.EachWith(t, setup, fn, append([]func(*hubtest.Options){options(false)}, opts...)...)
}

func setup(t *testing.T, h *hubtest.Hub) *bundle {
	t.Helper()
	b := &bundle{Bundle: hubtest.NewBundle(t, h, 90*time.Second)}
	b.clock, _ = h.Clock.(*clock.Fake)
	if err := b.CPO.PublishLocation(b.Ctx, "LOC1", "E1", "E2"); err != nil {
		t.Fatal(err)
	}
	b.token = b.EMSP.NewToken("TOK1", "APP_USER", "NEVER")
	if _, err := b.EMSP.PutToken(b.Ctx, b.token); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.CPO.Wait)
	return b
}

func (b *bundle) startBody(ref string) map[string]any {
	return map[string]any{"token": b.token, "location_id": "LOC1", "evse_uid": "E1", "connector_id": "1", "authorization_reference": ref}
}

// enveloped decodes the envelope of a raw answer.
func enveloped(resp *ocpiclient.Response) *ocpiclient.Response {
	resp.Envelope, _ = ocpi.DecodeEnvelope(resp.Body)
	return resp
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
	cmds := b.CPO.Commands()
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
	b.H.Admin(t, http.MethodGet, "/admin/commands/"+id, nil, &rec)
	return rec
}
