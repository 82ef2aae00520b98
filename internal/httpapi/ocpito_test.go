package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestOCPIToRules: OCPI-to naming the caller itself (or the hub) is a
// request to the hub and answers what the request without OCPI-to answers,
// on every list a partner pulls; OCPI-to naming a party the hub does not
// know is 4001, never an empty list; and every functional-module answer,
// errors included, carries the routing headers.
func TestOCPIToRules(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 60*time.Second)
		cpo := hubtest.Add(t, h, sim.StartCPO, "To CPO", "NL", "TOC")
		emsp := hubtest.Add(t, h, sim.StartEMSP, "To eMSP", "DE", "TOE")
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(cpo.PutLocation(ctx, "LOC1", sim.LocationObject("NL", "TOC", "LOC1", "E1")))
		must(cpo.PutTariff(ctx, "T1", energyTariff("NL", "TOC", "T1")))
		chargeOnce(t, ctx, cpo, emsp, "TOK1", "LOC1")

		to := hubtest.ToHeader
		get := func(p *sim.Platform, module string, hd http.Header) (int, int, string, http.Header) {
			t.Helper()
			base, ok := p.HubEndpoint(module, "SENDER")
			if !ok {
				t.Fatalf("hub lists no %s SENDER", module)
			}
			resp, err := p.Raw(ctx, http.MethodGet, base, nil, hd)
			if resp == nil {
				t.Fatal(err)
			}
			code := 0
			if resp.Envelope != nil {
				code = resp.Envelope.StatusCode
			}
			return resp.HTTPStatus, code, resp.Header.Get("X-Total-Count"), resp.Header
		}
		lists := []struct {
			module string
			p      *sim.Platform
			self   [2]string
		}{
			{"locations", emsp.Platform, [2]string{"DE", "TOE"}},
			{"tariffs", emsp.Platform, [2]string{"DE", "TOE"}},
			{"sessions", emsp.Platform, [2]string{"DE", "TOE"}},
			{"cdrs", emsp.Platform, [2]string{"DE", "TOE"}},
			{"tokens", cpo.Platform, [2]string{"NL", "TOC"}},
		}
		for _, l := range lists {
			_, _, want, _ := get(l.p, l.module, nil)
			if want != "1" {
				t.Fatalf("%s without OCPI-to: X-Total-Count %q, want 1", l.module, want)
			}
			for _, hd := range []http.Header{to(l.self[0], l.self[1]), to("in", "hub")} {
				st, code, n, rh := get(l.p, l.module, hd)
				if st != http.StatusOK || code != 1000 || n != want {
					t.Errorf("%s with OCPI-to %s/%s: HTTP %d %d X-Total-Count %q, want 200 1000 %s", l.module,
						hd.Get("OCPI-to-country-code"), hd.Get("OCPI-to-party-id"), st, code, n, want)
				}
				if rh.Get("OCPI-from-party-id") != "HUB" {
					t.Errorf("%s answer OCPI-from-party-id %q, want HUB", l.module, rh.Get("OCPI-from-party-id"))
				}
			}
			st, code, n, rh := get(l.p, l.module, to("XX", "ZZZ"))
			if st != http.StatusOK || code != 4001 || n != "" {
				t.Errorf("%s with an unknown OCPI-to: HTTP %d %d X-Total-Count %q, want 200 4001 and no list", l.module, st, code, n)
			}
			if rh.Get("OCPI-from-party-id") != "HUB" || rh.Get("OCPI-to-party-id") != l.self[1] {
				t.Errorf("%s 4001 answer routing headers from %q to %q, want HUB to %s", l.module,
					rh.Get("OCPI-from-party-id"), rh.Get("OCPI-to-party-id"), l.self[1])
			}
		}

		// Errors of functional modules carry the routing headers: a bad
		// PUT (2001), an unknown object (404), a forwarding failure (4001
		// for an unknown receiver; 4003 for a party that cannot be
		// reached).
		resp, err := cpo.Push(ctx, "locations", http.MethodPut, map[string]any{"id": "LOC2"}, nil, "LOC2")
		if resp == nil {
			t.Fatal(err)
		}
		checkRouted := func(what string, resp *ocpiclient.Response, status, code int, from, toPID string) {
			t.Helper()
			if resp.Envelope == nil || resp.HTTPStatus != status || resp.Envelope.StatusCode != code {
				t.Errorf("%s: HTTP %d %s, want %d %d", what, resp.HTTPStatus, resp.Body, status, code)
			}
			hd := resp.Header
			if hd.Get("OCPI-from-party-id") != from || hd.Get("OCPI-to-party-id") != toPID {
				t.Errorf("%s: routing headers from %q to %q, want from %s to %s", what, hd.Get("OCPI-from-party-id"), hd.Get("OCPI-to-party-id"), from, toPID)
			}
		}
		checkRouted("bad PUT", resp, 200, 2001, "HUB", "TOC")
		base, _ := emsp.HubEndpoint("locations", "SENDER")
		resp, _ = emsp.Raw(ctx, http.MethodGet, base+"/NOPE", nil, nil)
		checkRouted("unknown location", resp, 404, 2003, "HUB", "TOE")
		resp, _ = cpo.Push(ctx, "locations", http.MethodGet, nil, to("XX", "ZZZ"), "LOC1")
		checkRouted("forward to an unknown party", resp, 200, 4001, "HUB", "TOC")
		emsp.SetDown(true)
		resp, _ = cpo.Push(ctx, "locations", http.MethodGet, nil, to("DE", "TOE"), "LOC1")
		emsp.SetDown(false)
		if resp.Envelope == nil || resp.Envelope.StatusCode < 4000 || resp.Envelope.StatusCode > 4003 {
			t.Fatalf("forward to a party that is down: %s", resp.Body)
		}
		checkRouted("forward to a party that is down", resp, resp.HTTPStatus, resp.Envelope.StatusCode, "HUB", "TOC")
		// The configuration modules stay without them.
		vresp := h.Do(t, http.MethodGet, "/ocpi/2.2.1/credentials", emsp.Token(), nil, nil)
		if vresp.Header.Get("OCPI-from-party-id") != "" {
			t.Errorf("credentials answer carries OCPI-from-party-id %q", vresp.Header.Get("OCPI-from-party-id"))
		}
	})
}

// TestSelfAddressedOffsetClient: a client that always sends OCPI-to = its
// own party and pages by rebuilding offset URLs (ignoring Link) exports
// every object of every hub sender it uses: locations, tariffs, sessions
// and CDRs as an eMSP, tokens as a CPO.
func TestSelfAddressedOffsetClient(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 60*time.Second)
		cpo := hubtest.Add(t, h, sim.StartCPO, "Offset CPO", "NL", "OFC")
		cli := hubtest.Add(t, h, sim.StartEMSP, "CLI eMSP", "DE", "CLI")
		const n = 7
		for i := range n {
			id := "LOC" + strconv.Itoa(i)
			if err := cpo.PutLocation(ctx, id, sim.LocationObject("NL", "OFC", id, "E1")); err != nil {
				t.Fatal(err)
			}
		}
		const m = 4
		for i := range m {
			id := "T" + strconv.Itoa(i)
			if err := cpo.PutTariff(ctx, id, energyTariff("NL", "OFC", id)); err != nil {
				t.Fatal(err)
			}
			chargeOnce(t, ctx, cpo, cli, "TOK"+strconv.Itoa(i), "LOC0")
		}
		for _, c := range []struct {
			p      *sim.Platform
			module string
			key    string
			want   int
		}{
			{cli.Platform, "locations", "id", n},
			{cli.Platform, "tariffs", "id", m},
			{cli.Platform, "sessions", "id", m},
			{cli.Platform, "cdrs", "id", m},
			{cpo.Platform, "tokens", "uid", m},
		} {
			got, err := c.p.PullAll(ctx, c.module, 3)
			if err != nil {
				t.Fatalf("%s: %v", c.module, err)
			}
			seen := map[string]bool{}
			for _, raw := range got {
				var obj map[string]any
				if err := json.Unmarshal(raw, &obj); err != nil {
					t.Fatal(err)
				}
				id, _ := obj[c.key].(string)
				seen[id] = true
			}
			if len(got) != c.want || len(seen) != c.want {
				t.Errorf("the client exported %d %s (%d distinct), want %d", len(got), c.module, len(seen), c.want)
			}
		}
	})
}

// energyTariff is a tariff of the party cc/pid that prices energy only.
func energyTariff(cc, pid, id string) map[string]any {
	return map[string]any{"country_code": cc, "party_id": pid, "id": id, "currency": "INR",
		"elements":     []any{map[string]any{"price_components": []any{map[string]any{"type": "ENERGY", "price": 12, "step_size": 1}}}},
		"last_updated": ocpi.NewDateTime(time.Now())}
}

// chargeOnce has emsp put the RFID token uid and cpo run one whole session
// with it at the location's E1/1; it returns the token and the session's id.
func chargeOnce(t *testing.T, ctx context.Context, cpo *sim.CPO, emsp *sim.EMSP, uid, location string) (map[string]any, string) {
	t.Helper()
	tok := emsp.NewToken(uid, "RFID", "ALWAYS")
	if _, err := emsp.PutToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	sid, err := cpo.StartSession(ctx, map[string]any{"token": tok, "location_id": location, "evse_uid": "E1", "connector_id": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cpo.StopSession(ctx, sid); err != nil {
		t.Fatal(err)
	}
	return tok, sid
}
