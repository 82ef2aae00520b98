package token_test

import (
	"net/http"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/token"
)

func tokenRef(cc, pid, uid, typ string) token.Ref {
	return token.Ref{CountryCode: cc, PartyID: pid, UID: uid, Type: typ}
}

// authorize asks the hub, as the CPO, to authorize a token at LOC1.
func (b *bundle) authorize(t *testing.T, uid, typ string, body any, header http.Header) *ocpiclient.Response {
	t.Helper()
	suffix := "/" + uid + "/authorize"
	if typ != "" {
		suffix += "?type=" + typ
	}
	resp, err := b.CPO.Raw(b.ctx, http.MethodPost, hubtest.HubURL(t, b.CPO.Platform, "tokens", "SENDER", suffix), body, header)
	if resp == nil {
		t.Fatalf("authorize: %v", err)
	}
	return resp
}

var atLOC1 = map[string]any{"location_id": "LOC1", "evse_uids": []any{"E1"}}

// TestAuthorizeOwnTokens: ocpihub's own tokens are answered by the hub
// itself, with a remembered reference; blocked, unknown and misplaced
// requests get what the spec says.
func TestAuthorizeOwnTokens(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		if _, err := b.h.Tokens.Issue(b.ctx, ocpi.Token{UID: "APP-1", Type: "APP_USER"}); err != nil {
			t.Fatal(err)
		}
		blocked := false
		if _, err := b.h.Tokens.Issue(b.ctx, ocpi.Token{UID: "APP-2", Type: "APP_USER", Valid: &blocked}); err != nil {
			t.Fatal(err)
		}

		resp := hubtest.MustStatus(t, b.authorize(t, "APP-1", "APP_USER", atLOC1, nil), nil, http.StatusOK, 1000)
		info := hubtest.Data(t, resp)
		ref, _ := info["authorization_reference"].(string)
		if info["allowed"] != "ALLOWED" || ref == "" || info["token"].(map[string]any)["party_id"] != "OHE" {
			t.Fatalf("own token answer: %s", resp.Body)
		}
		if loc := info["location"].(map[string]any); loc["location_id"] != "LOC1" {
			t.Errorf("location not echoed: %s", resp.Body)
		}
		rec, err := b.h.Tokens.FindAuthorization(b.ctx, ref)
		if err != nil || rec.Source != token.SourceOwn || rec.Token.UID != "APP-1" || rec.LocationID != "LOC1" || rec.CPO.PartyID != "CP1" {
			t.Errorf("remembered authorization: %+v %v", rec, err)
		}

		// EVSE uids are CiStrings.
		resp = hubtest.MustStatus(t, b.authorize(t, "APP-1", "APP_USER", map[string]any{"location_id": "LOC1", "evse_uids": []any{"e1"}}, nil), nil, http.StatusOK, 1000)
		info = hubtest.Data(t, resp)
		if info["allowed"] != "ALLOWED" || info["authorization_reference"] == ref {
			t.Errorf("own token at e1: %s", resp.Body)
		}
		ref2, _ := info["authorization_reference"].(string)
		hubtest.TimeOrdered(t, "authorization references, the first answer's then the second's", ref, ref2)

		resp = hubtest.MustStatus(t, b.authorize(t, "APP-2", "APP_USER", atLOC1, nil), nil, http.StatusOK, 1000)
		if info := hubtest.Data(t, resp); info["allowed"] != "BLOCKED" || info["authorization_reference"] != nil {
			t.Errorf("invalid own token: %s", resp.Body)
		}

		// Unknown token (the type is part of the key), unknown location or
		// EVSE, malformed references.
		hubtest.MustStatus(t, b.authorize(t, "APP-1", "", atLOC1, nil), nil, http.StatusNotFound, 2004)
		hubtest.MustStatus(t, b.authorize(t, "NOBODY", "RFID", atLOC1, nil), nil, http.StatusNotFound, 2004)
		resp = hubtest.MustStatus(t, b.authorize(t, "APP-1", "APP_USER", map[string]any{"location_id": "LOC9"}, nil), nil, http.StatusOK, 2003)
		if hubtest.ErrorField(resp) != "location_id" {
			t.Errorf("unknown location: %s", resp.Body)
		}
		// Both unknown: the location is named, and nothing is recorded.
		before := storetest.Count(t, b.h.DB, "SELECT COUNT(*) FROM token_authorizations")
		resp = hubtest.MustStatus(t, b.authorize(t, "NOBODY", "RFID", map[string]any{"location_id": "LOC9"}, nil), nil, http.StatusOK, 2003)
		if hubtest.ErrorField(resp) != "location_id" {
			t.Errorf("unknown token at an unknown location: %s", resp.Body)
		}
		if after := storetest.Count(t, b.h.DB, "SELECT COUNT(*) FROM token_authorizations"); after != before {
			t.Errorf("a refused authorization was recorded: %d records, %d before", after, before)
		}
		resp = hubtest.MustStatus(t, b.authorize(t, "APP-1", "APP_USER", map[string]any{"location_id": "LOC1", "evse_uids": []any{"E1", "E7"}}, nil), nil, http.StatusOK, 2003)
		if hubtest.ErrorField(resp) != "evse_uids[1]" {
			t.Errorf("unknown EVSE: %s", resp.Body)
		}
		resp = hubtest.MustStatus(t, b.authorize(t, "APP-1", "APP_USER", map[string]any{"evse_uids": []any{"E1"}}, nil), nil, http.StatusOK, 2001)
		if hubtest.ErrorField(resp) != "location_id" {
			t.Errorf("missing location_id: %s", resp.Body)
		}
		hubtest.MustStatus(t, b.authorize(t, "APP-1", "CARD", atLOC1, nil), nil, http.StatusOK, 2001)
		// Without location references the token alone decides.
		resp = hubtest.MustStatus(t, b.authorize(t, "APP-1", "APP_USER", nil, nil), nil, http.StatusOK, 1000)
		if hubtest.Data(t, resp)["allowed"] != "ALLOWED" {
			t.Errorf("no location references: %s", resp.Body)
		}
		// Only a CPO may ask.
		resp, _ = b.EMSP.Raw(b.ctx, http.MethodPost, hubtest.HubURL(t, b.CPO.Platform, "tokens", "SENDER", "/APP-1/authorize?type=APP_USER"), atLOC1, nil)
		hubtest.MustStatus(t, resp, nil, http.StatusNotFound, 2000)
	})
}

// TestAuthorizeForwarded: another eMSP's tokens are authorized by that
// eMSP, its answer passed back; ALWAYS tokens are answered from the hub's
// copy; a silent eMSP is 4002 for a NEVER token and a fallback answer for
// an ALLOWED_OFFLINE one.
func TestAuthorizeForwarded(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		for _, tok := range []map[string]any{
			b.EMSP.NewToken("NEVER-1", "RFID", "NEVER"),
			b.EMSP.NewToken("ALWAYS-1", "RFID", "ALWAYS"),
			b.EMSP.NewToken("OFFLINE-1", "RFID", "ALLOWED_OFFLINE"),
		} {
			resp, err := b.EMSP.PutToken(b.ctx, tok)
			hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		}

		// Forwarded: the eMSP decides, the hub passes its answer back.
		resp := hubtest.MustStatus(t, b.authorize(t, "NEVER-1", "", atLOC1, nil), nil, http.StatusOK, 1000)
		info := hubtest.Data(t, resp)
		if info["allowed"] != "ALLOWED" || info["authorization_reference"] != "EM1-AUTH-1" {
			t.Fatalf("forwarded answer: %s", resp.Body)
		}
		got := b.EMSP.Requests(sim.PathHas(http.MethodPost, "/emsp/tokens/NEVER-1/authorize"))
		if len(got) != 1 || got[0].Query != "type=RFID" || got[0].Header.Get("OCPI-from-party-id") != "CP1" ||
			got[0].Header.Get("OCPI-to-party-id") != "EM1" || string(got[0].Body) != `{"evse_uids":["E1"],"location_id":"LOC1"}` {
			t.Fatalf("eMSP got %d authorize requests: %+v", len(got), got)
		}
		if resp.Header.Get("OCPI-from-party-id") != "EM1" || resp.Header.Get("OCPI-to-party-id") != "CP1" {
			t.Errorf("answer routing headers: from %s to %s", resp.Header.Get("OCPI-from-party-id"), resp.Header.Get("OCPI-to-party-id"))
		}
		if rec, err := b.h.Tokens.FindAuthorization(b.ctx, "EM1-AUTH-1"); err != nil || rec.Source != token.SourceForwarded {
			t.Errorf("forwarded authorization not remembered: %+v %v", rec, err)
		}
		b.EMSP.OnAuthorize(func(uid, typ string, body map[string]any) sim.AuthorizeBehavior {
			return sim.AuthorizeBehavior{Allowed: "NO_CREDIT"}
		})
		resp = hubtest.MustStatus(t, b.authorize(t, "NEVER-1", "RFID", atLOC1, nil), nil, http.StatusOK, 1000)
		if hubtest.Data(t, resp)["allowed"] != "NO_CREDIT" {
			t.Errorf("eMSP's refusal not passed back: %s", resp.Body)
		}

		// ALWAYS: answered from the hub's copy; the eMSP is not asked.
		before := len(b.EMSP.Requests(sim.PathHas(http.MethodPost, "/authorize")))
		resp = hubtest.MustStatus(t, b.authorize(t, "ALWAYS-1", "RFID", atLOC1, nil), nil, http.StatusOK, 1000)
		if info := hubtest.Data(t, resp); info["allowed"] != "ALLOWED" || info["authorization_reference"] != nil {
			t.Errorf("ALWAYS token: %s", resp.Body)
		}
		if after := len(b.EMSP.Requests(sim.PathHas(http.MethodPost, "/authorize"))); after != before {
			t.Errorf("the eMSP was asked about an ALWAYS token")
		}

		// A token the hub does not hold, addressed to its eMSP: forwarded,
		// and the eMSP's 2004 passed back.
		b.EMSP.OnAuthorize(nil)
		hubtest.MustStatus(t, b.authorize(t, "STRANGER", "RFID", atLOC1, hubtest.ToHeader("DE", "EM1")), nil, http.StatusNotFound, 2004)
		if n := len(b.EMSP.Requests(sim.PathHas(http.MethodPost, "/emsp/tokens/STRANGER/authorize"))); n != 1 {
			t.Errorf("addressed authorization reached the eMSP %d times", n)
		}

		// The eMSP goes silent: 4002 for NEVER, our copy for ALLOWED_OFFLINE.
		b.EMSP.OnAuthorize(func(uid, typ string, body map[string]any) sim.AuthorizeBehavior {
			return sim.AuthorizeBehavior{Silent: true}
		})
		hubtest.MustStatus(t, b.authorize(t, "NEVER-1", "RFID", atLOC1, nil), nil, http.StatusOK, 4002)
		resp = hubtest.MustStatus(t, b.authorize(t, "OFFLINE-1", "RFID", atLOC1, nil), nil, http.StatusOK, 1000)
		if hubtest.Data(t, resp)["allowed"] != "ALLOWED" {
			t.Errorf("ALLOWED_OFFLINE fallback: %s", resp.Body)
		}
		// The eMSP is gone: 4003.
		b.EMSP.OnAuthorize(nil)
		b.EMSP.Close()
		hubtest.MustStatus(t, b.authorize(t, "NEVER-1", "RFID", atLOC1, nil), nil, http.StatusOK, 4003)
	})
}
