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
	"github.com/ocpihub/ocpihub/internal/sim"
)

// bundle is a hub with a CPO (IN/CP1, publishing LOC1 with EVSEs E1, E2)
// and two eMSPs registered (hubtest.Trio).
type bundle struct {
	h *hubtest.Hub
	hubtest.Cast
	ctx context.Context
}

var fast = hubtest.Configure(false, func(c *app.Config) { c.ForwardTimeout = 400 * time.Millisecond })

// each runs fn in parallel on each engine, on a bundle of a hub started
// with fast and then opts.
func each(t *testing.T, fn func(*testing.T, *bundle), opts ...func(*hubtest.Options)) {
	t.Parallel()
	hubtest.EachWith(t, setup, fn, append([]func(*hubtest.Options){fast}, opts...)...)
}

func setup(t *testing.T, h *hubtest.Hub) *bundle {
	t.Helper()
	b := &bundle{h: h, Cast: h.Trio(t, "IN"), ctx: hubtest.Ctx(t, 60*time.Second)}
	if err := b.CPO.PublishLocation(b.ctx, "LOC1", "E1", "E2"); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTokenPushReachesCPOs: an eMSP's token is stored, forwarded to the
// CPO with the right addressing, invalidated by a PATCH that reaches the CPO
// too, pulled by the CPO, and invisible to another eMSP.
func TestTokenPushReachesCPOs(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		tok := b.EMSP.NewToken("04A1B2C3D4", "RFID", "ALLOWED")
		tok["x_vendor"] = "kept"
		resp, err := b.EMSP.PutToken(b.ctx, tok)
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		resp, err = b.EMSP.PutToken(b.ctx, tok)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)

		if _, err := b.CPO.WaitFor(b.ctx, 1, func(sim.Request) bool { return b.CPO.ReceivedToken("DE", "EM1", "04A1B2C3D4", "RFID") != nil }); err != nil {
			t.Fatal(err)
		}
		puts := b.CPO.Requests(sim.PathHas(http.MethodPut, "/cpo/tokens/DE/EM1/04A1B2C3D4"))
		if len(puts) != 1 || puts[0].Query != "type=RFID" {
			t.Fatalf("CPO got %d token PUTs (%v), want 1 with ?type=RFID (an unchanged re-PUT is not forwarded)", len(puts), puts)
		}
		if hd := puts[0].Header; hd.Get("OCPI-to-party-id") != "CP1" || hd.Get("OCPI-from-party-id") != "HUB" {
			t.Errorf("push addressed to %s from %s, want CP1 from HUB", hd.Get("OCPI-to-party-id"), hd.Get("OCPI-from-party-id"))
		}
		if got := b.CPO.ReceivedToken("DE", "EM1", "04A1B2C3D4", "RFID"); got["x_vendor"] != "kept" || got["valid"] != true {
			t.Errorf("CPO's copy: %v", got)
		}
		if n := len(b.EMSP2.Requests(sim.PathHas("", "/tokens/"))); n != 0 {
			t.Errorf("another eMSP received %d token requests", n)
		}

		// valid=false reaches the CPO.
		resp, err = b.EMSP.PatchToken(b.ctx, "04A1B2C3D4", "RFID", map[string]any{"valid": false, "last_updated": ocpi.NewDateTime(time.Now())})
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if _, err := b.CPO.WaitFor(b.ctx, 1, func(sim.Request) bool {
			return b.CPO.ReceivedToken("DE", "EM1", "04A1B2C3D4", "RFID")["valid"] == false
		}); err != nil {
			t.Fatalf("valid=false did not reach the CPO: %v", err)
		}
		if n := len(b.CPO.Requests(sim.PathHas(http.MethodPatch, "/cpo/tokens/DE/EM1/04A1B2C3D4"))); n != 1 {
			t.Errorf("CPO got %d PATCHes, want 1", n)
		}

		// The eMSP reads the hub's copy; the other eMSP cannot.
		u := hubtest.HubURL(t, b.EMSP.Platform, "tokens", "RECEIVER", "/DE/EM1/04A1B2C3D4")
		resp, err = b.EMSP.Raw(b.ctx, http.MethodGet, u, nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if got := hubtest.Data(t, resp); got["valid"] != false || got["x_vendor"] != "kept" {
			t.Errorf("hub's copy: %s", resp.Body)
		}
		resp, err = b.EMSP2.Raw(b.ctx, http.MethodGet, u, nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)
		resp, err = b.EMSP2.Raw(b.ctx, http.MethodPut, u, tok, nil)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)

		// The CPO pulls every token, paged; an eMSP may not.
		resp, err = b.CPO.Raw(b.ctx, http.MethodGet, hubtest.HubURL(t, b.CPO.Platform, "tokens", "SENDER", "?limit=10"), nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		var list []map[string]any
		if json.Unmarshal(resp.Envelope.Data, &list) != nil || len(list) != 1 || resp.Header.Get("X-Total-Count") != "1" {
			t.Errorf("CPO pull: %s (X-Total-Count %q)", resp.Body, resp.Header.Get("X-Total-Count"))
		}
		resp, err = b.EMSP.Raw(b.ctx, http.MethodGet, hubtest.HubURL(t, b.CPO.Platform, "tokens", "SENDER", ""), nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)
	})
}

// TestTokenValidation: every malformed push is refused with the field
// named, and nothing is stored or forwarded.
func TestTokenValidation(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		base := hubtest.HubURL(t, b.EMSP.Platform, "tokens", "RECEIVER", "/DE/EM1/")
		good := b.EMSP.NewToken("T1", "RFID", "ALLOWED")
		edit := func(f func(m map[string]any)) map[string]any {
			m := b.EMSP.NewToken("T1", "RFID", "ALLOWED")
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
			resp, err := b.EMSP.Raw(b.ctx, c.method, base+c.suffix, c.body, nil)
			hubtest.MustError(t, c.name, resp, err, c.http, c.code, c.field)
		}
		// A stored token and PATCHes that break it.
		resp, err := b.EMSP.PutToken(b.ctx, good)
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
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
			resp, err := b.EMSP.Raw(b.ctx, http.MethodPatch, base+"T1", c.patch, nil)
			hubtest.MustError(t, c.name, resp, err, http.StatusOK, 2001, c.field)
		}
		stored, err := b.h.Tokens.Find(b.ctx, tokenRef("DE", "EM1", "T1", ""))
		if err != nil || !stored.IsValid() || stored.Whitelist != "ALLOWED" {
			t.Errorf("stored token changed: %+v %v", stored, err)
		}
		if _, err := b.CPO.WaitFor(b.ctx, 1, sim.PathHas(http.MethodPut, "/cpo/tokens/DE/EM1/T1")); err != nil {
			t.Fatal(err)
		}
		if n := len(b.CPO.Requests(sim.PathHas("", "/cpo/tokens/"))); n != 1 {
			t.Errorf("CPO got %d token pushes, want the one valid PUT", n)
		}
	})
}
