package token_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// bundle is a hub with a CPO (publishing LOC1 with EVSEs E1, E2) and two
// eMSPs registered.
type bundle struct {
	h     *hubtest.Hub
	cpo   *sim.CPO
	emsp  *sim.EMSP
	emsp2 *sim.EMSP
	ctx   context.Context
}

func fast(o *hubtest.Options) {
	o.Config = func(c *app.Config) {
		c.PushBackoff = 20 * time.Millisecond
		c.ForwardTimeout = 400 * time.Millisecond
		c.SyncInterval = 0
	}
}

func setup(t *testing.T, h *hubtest.Hub) *bundle {
	t.Helper()
	b := &bundle{h: h, ctx: hubtest.Ctx(t, 60*time.Second)}
	var err error
	if b.cpo, err = sim.StartCPO("CPO One", "IN", "CP1", hubtest.Logger()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.cpo.Close)
	if b.emsp, err = sim.StartEMSP("eMSP One", "DE", "EM1", hubtest.Logger()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.emsp.Close)
	if b.emsp2, err = sim.StartEMSP("eMSP Two", "FR", "EM2", hubtest.Logger()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.emsp2.Close)
	h.Register(t, b.cpo.Platform)
	h.Register(t, b.emsp.Platform)
	h.Register(t, b.emsp2.Platform)
	if err := b.cpo.PublishLocation(b.ctx, "LOC1", "E1", "E2"); err != nil {
		t.Fatal(err)
	}
	return b
}

// mustStatus checks an answer's HTTP status and status_code.
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

func errorField(resp *ocpiclient.Response) string {
	if resp.Envelope == nil || resp.Envelope.Error == nil || resp.Envelope.Error.Details == nil {
		return ""
	}
	return resp.Envelope.Error.Details.Field
}

func data(t *testing.T, resp *ocpiclient.Response) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(resp.Envelope.Data, &m); err != nil {
		t.Fatalf("data is not an object: %s", resp.Body)
	}
	return m
}

func hubURL(t *testing.T, p *sim.Platform, module, role, suffix string) string {
	t.Helper()
	base, ok := p.HubEndpoint(module, role)
	if !ok {
		t.Fatalf("hub lists no %s %s", module, role)
	}
	return base + suffix
}

func toHeader(cc, pid string) http.Header {
	h := http.Header{}
	h.Set("OCPI-to-country-code", cc)
	h.Set("OCPI-to-party-id", pid)
	return h
}

// TestTokenPushReachesCPOs: an eMSP's token is stored, forwarded to the
// CPO with the right addressing, invalidated by a PATCH that reaches the CPO
// too, pulled by the CPO, and invisible to another eMSP.
func TestTokenPushReachesCPOs(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		b := setup(t, h)
		tok := b.emsp.NewToken("04A1B2C3D4", "RFID", "ALLOWED")
		tok["x_vendor"] = "kept"
		resp, err := b.emsp.PutToken(b.ctx, tok)
		mustStatus(t, resp, err, http.StatusCreated, 1000)
		resp, err = b.emsp.PutToken(b.ctx, tok)
		mustStatus(t, resp, err, http.StatusOK, 1000)

		if _, err := b.cpo.WaitFor(b.ctx, 1, func(sim.Request) bool { return b.cpo.ReceivedToken("DE", "EM1", "04A1B2C3D4", "RFID") != nil }); err != nil {
			t.Fatal(err)
		}
		puts := b.cpo.Requests(sim.PathHas(http.MethodPut, "/cpo/tokens/DE/EM1/04A1B2C3D4"))
		if len(puts) != 1 || puts[0].Query != "type=RFID" {
			t.Fatalf("CPO got %d token PUTs (%v), want 1 with ?type=RFID (an unchanged re-PUT is not forwarded)", len(puts), puts)
		}
		if hd := puts[0].Header; hd.Get("OCPI-to-party-id") != "CP1" || hd.Get("OCPI-from-party-id") != "HUB" {
			t.Errorf("push addressed to %s from %s, want CP1 from HUB", hd.Get("OCPI-to-party-id"), hd.Get("OCPI-from-party-id"))
		}
		if got := b.cpo.ReceivedToken("DE", "EM1", "04A1B2C3D4", "RFID"); got["x_vendor"] != "kept" || got["valid"] != true {
			t.Errorf("CPO's copy: %v", got)
		}
		if n := len(b.emsp2.Requests(sim.PathHas("", "/tokens/"))); n != 0 {
			t.Errorf("another eMSP received %d token requests", n)
		}

		// valid=false reaches the CPO.
		resp, err = b.emsp.PatchToken(b.ctx, "04A1B2C3D4", "RFID", map[string]any{"valid": false, "last_updated": ocpi.NewDateTime(time.Now())})
		mustStatus(t, resp, err, http.StatusOK, 1000)
		if _, err := b.cpo.WaitFor(b.ctx, 1, func(sim.Request) bool {
			return b.cpo.ReceivedToken("DE", "EM1", "04A1B2C3D4", "RFID")["valid"] == false
		}); err != nil {
			t.Fatalf("valid=false did not reach the CPO: %v", err)
		}
		if n := len(b.cpo.Requests(sim.PathHas(http.MethodPatch, "/cpo/tokens/DE/EM1/04A1B2C3D4"))); n != 1 {
			t.Errorf("CPO got %d PATCHes, want 1", n)
		}

		// The eMSP reads the hub's copy; the other eMSP cannot.
		u := hubURL(t, b.emsp.Platform, "tokens", "RECEIVER", "/DE/EM1/04A1B2C3D4")
		resp, err = b.emsp.Raw(b.ctx, http.MethodGet, u, nil, nil)
		mustStatus(t, resp, err, http.StatusOK, 1000)
		if got := data(t, resp); got["valid"] != false || got["x_vendor"] != "kept" {
			t.Errorf("hub's copy: %s", resp.Body)
		}
		resp, err = b.emsp2.Raw(b.ctx, http.MethodGet, u, nil, nil)
		mustStatus(t, resp, err, http.StatusNotFound, 2000)
		resp, err = b.emsp2.Raw(b.ctx, http.MethodPut, u, tok, nil)
		mustStatus(t, resp, err, http.StatusNotFound, 2000)

		// The CPO pulls every token, paged; an eMSP may not.
		resp, err = b.cpo.Raw(b.ctx, http.MethodGet, hubURL(t, b.cpo.Platform, "tokens", "SENDER", "?limit=10"), nil, nil)
		mustStatus(t, resp, err, http.StatusOK, 1000)
		var list []map[string]any
		if json.Unmarshal(resp.Envelope.Data, &list) != nil || len(list) != 1 || resp.Header.Get("X-Total-Count") != "1" {
			t.Errorf("CPO pull: %s (X-Total-Count %q)", resp.Body, resp.Header.Get("X-Total-Count"))
		}
		resp, err = b.emsp.Raw(b.ctx, http.MethodGet, hubURL(t, b.cpo.Platform, "tokens", "SENDER", ""), nil, nil)
		mustStatus(t, resp, err, http.StatusNotFound, 2000)
	}, fast)
}

// TestTokenValidation: every malformed push is refused with the field
// named, and nothing is stored or forwarded.
func TestTokenValidation(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		b := setup(t, h)
		base := hubURL(t, b.emsp.Platform, "tokens", "RECEIVER", "/DE/EM1/")
		good := b.emsp.NewToken("T1", "RFID", "ALLOWED")
		edit := func(f func(m map[string]any)) map[string]any {
			m := b.emsp.NewToken("T1", "RFID", "ALLOWED")
			f(m)
			return m
		}
		cases := []struct {
			name, method, suffix string
			body                 any
			http, code           int
			field                string
		}{
			{"uid mismatch", "PUT", "T2", good, 200, 2001, "uid"},
			{"type mismatch", "PUT", "T1?type=APP_USER", good, 200, 2001, "type"},
			{"bad type param", "PUT", "T1?type=CARD", good, 200, 2001, "type"},
			{"uid too long", "PUT", strings.Repeat("u", 37), good, 200, 2001, "token_uid"},
			{"whitelist", "PUT", "T1", edit(func(m map[string]any) { m["whitelist"] = "MAYBE" }), 200, 2001, "whitelist"},
			{"issuer 65", "PUT", "T1", edit(func(m map[string]any) { m["issuer"] = strings.Repeat("i", 65) }), 200, 2001, "issuer"},
			{"valid missing", "PUT", "T1", edit(func(m map[string]any) { delete(m, "valid") }), 200, 2001, "valid"},
			{"energy contract", "PUT", "T1", edit(func(m map[string]any) { m["energy_contract"] = map[string]any{"contract_id": "x"} }), 200, 2001, "energy_contract.supplier_name"},
			{"party mismatch", "PUT", "T1", edit(func(m map[string]any) { m["party_id"] = "EM9" }), 200, 2001, "party_id"},
			{"not JSON", "PUT", "T1", []byte("{"), 400, 2001, ""},
			{"patch unknown", "PATCH", "T1", map[string]any{"valid": false, "last_updated": "2026-01-01T00:00:00Z"}, 404, 2000, ""},
		}
		for _, c := range cases {
			resp, err := b.emsp.Raw(b.ctx, c.method, base+c.suffix, c.body, nil)
			mustStatus(t, resp, err, c.http, c.code)
			if got := errorField(resp); got != c.field {
				t.Errorf("%s: field %q (%s), want %q", c.name, got, resp.Body, c.field)
			}
		}
		// A stored token and PATCHes that break it.
		resp, err := b.emsp.PutToken(b.ctx, good)
		mustStatus(t, resp, err, http.StatusCreated, 1000)
		for _, c := range []struct {
			name  string
			patch map[string]any
			field string
		}{
			{"no last_updated", map[string]any{"valid": false}, "last_updated"},
			{"changes uid", map[string]any{"uid": "T9", "last_updated": "2026-01-01T00:00:00Z"}, "uid"},
			{"bad whitelist", map[string]any{"whitelist": "X", "last_updated": "2026-01-01T00:00:00Z"}, "whitelist"},
			{"removes issuer", map[string]any{"issuer": nil, "last_updated": "2026-01-01T00:00:00Z"}, "issuer"},
		} {
			resp, err := b.emsp.Raw(b.ctx, http.MethodPatch, base+"T1", c.patch, nil)
			mustStatus(t, resp, err, http.StatusOK, 2001)
			if got := errorField(resp); got != c.field {
				t.Errorf("%s: field %q, want %q", c.name, got, c.field)
			}
		}
		stored, err := h.Tokens.Find(b.ctx, tokenRef("DE", "EM1", "T1", ""))
		if err != nil || !stored.IsValid() || stored.Whitelist != "ALLOWED" {
			t.Errorf("stored token changed: %+v %v", stored, err)
		}
		if _, err := b.cpo.WaitFor(b.ctx, 1, sim.PathHas(http.MethodPut, "/cpo/tokens/DE/EM1/T1")); err != nil {
			t.Fatal(err)
		}
		if n := len(b.cpo.Requests(sim.PathHas("", "/cpo/tokens/"))); n != 1 {
			t.Errorf("CPO got %d token pushes, want the one valid PUT", n)
		}
	}, fast)
}
