package payment_test

import (
	"fmt"
	"github.com/ocpihub/ocpihub/internal/sim/ptpsim"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/payment"
)

// pay runs a payment to its CDR: START_SESSION with ref, then STOP_SESSION;
// it returns once the PTP holds the CDR.
func pay(t *testing.T, b *bundle, ref string) {
	t.Helper()
	tx, err := b.ptp.Begin(b.ctx, ref, "LOC1", "E2", "1", "", "")
	if err != nil {
		t.Fatal(err)
	}
	hubtest.MustStatus(t, tx.Answer, nil, http.StatusOK, 1000)
	wait(t, b.ctx, b.ptp.Platform, "the session of "+ref, func() bool { return b.ptp.SessionByReference(ref) != nil })
	id, _ := b.ptp.SessionByReference(ref)["id"].(string)
	resp, err := b.ptp.Stop(b.ctx, id)
	hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
	wait(t, b.ctx, b.ptp.Platform, "the CDR of "+ref, func() bool { return b.ptp.CDRByReference(ref) != nil })
}

// flagged returns the hub's flagged confirmations.
func flagged(t *testing.T, h *hubtest.Hub) []payment.Advice {
	t.Helper()
	var out []payment.Advice
	h.Admin(t, http.MethodGet, "/admin/financial-advice/flagged", nil, &out)
	return out
}

// TestAdviceFlags: a confirmation whose amount differs from the CDR's, one
// whose capture failed, and one for a reference nobody knows are accepted
// and flagged (metric, log, event); the unmatched one is linked, cleared
// and forwarded when its payment's CDR arrives; the operator resolves
// flags.
func TestAdviceFlags(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx, ptp, cpo := b.ctx, b.ptp, b.cpo

		// Captured 1.00 more than the CDR says.
		pay(t, b, "pay-mismatch")
		advice, err := ptp.Advice("FAC-M", "pay-mismatch", "1.00")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := ptp.Confirm(ctx, advice)
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		events, err := b.events.Wait(ctx, event.FinancialAdviceFlagged, 1)
		if err != nil {
			t.Fatal(err)
		}
		d := events[0].Data.(map[string]any)
		if d["reason"] != payment.FlagAmountMismatch || d["authorization_reference"] != "pay-mismatch" ||
			!strings.Contains(fmt.Sprint(d["detail"]), "273.88") || !strings.Contains(fmt.Sprint(d["detail"]), "272.88") {
			t.Errorf("flagged event: %v", d)
		}
		if len(events[0].Parties) != 2 {
			t.Errorf("event parties: %v", events[0].Parties)
		}
		if n := counter(t, b.h, "ocpihub_payment_advice_flagged_total", payment.FlagAmountMismatch); n != 1 {
			t.Errorf("metric: %v", n)
		}
		// Flagged, still forwarded to the CPO.
		wait(t, ctx, cpo.Platform, "the mismatching confirmation at the CPO", func() bool { return len(cpo.ReceivedAdvice()) == 1 })

		// Another PTP confirming this PTP's payment: unmatched, flagged,
		// never forwarded nor shown to the CPO.
		other := b.otherPTP(t)
		stolen, _ := ptp.Advice("FAC-S", "pay-mismatch", "")
		resp, err = other.Confirm(ctx, stolen)
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		if _, err := b.events.Wait(ctx, event.FinancialAdviceFlagged, 2); err != nil {
			t.Fatal(err)
		}
		if e := b.events.Events(event.FinancialAdviceFlagged)[1]; e.Data.(map[string]any)["reason"] != payment.FlagUnmatched {
			t.Errorf("another PTP's confirmation: %v", e.Data)
		}

		// A FAILED capture, without eft_data (the spec's own example).
		pay(t, b, "pay-failed")
		resp, err = ptp.Confirm(ctx, map[string]any{"id": "FAC-F", "authorization_reference": "pay-failed", "currency": "INR",
			"total_costs": map[string]any{"excl_vat": 0}, "capture_status_code": "FAILED", "capture_status_message": "Card expired",
			"last_updated": ocpi.NewDateTime(time.Now())})
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)

		// A confirmation for a reference the hub does not know: stored,
		// unmatched, flagged; no CPO sees it.
		advice["id"], advice["authorization_reference"] = "FAC-U", "pay-later"
		resp, err = ptp.Confirm(ctx, advice)
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		if _, err := b.events.Wait(ctx, event.FinancialAdviceFlagged, 4); err != nil {
			t.Fatal(err)
		}
		reasons := map[string]string{}
		for _, a := range flagged(t, b.h) {
			reasons[a.ID] = a.Flag
		}
		want := map[string]string{"FAC-M": payment.FlagAmountMismatch, "FAC-F": payment.FlagCaptureFailed, "FAC-U": payment.FlagUnmatched,
			"FAC-S": payment.FlagUnmatched}
		if fmt.Sprint(reasons) != fmt.Sprint(want) {
			t.Fatalf("flagged list: %v, want %v", reasons, want)
		}
		chainOf := func(ref string) payment.Chain {
			var c payment.Chain // fresh: omitted fields must not keep old values
			b.h.Admin(t, http.MethodGet, "/admin/payments/"+ref, nil, &c)
			return c
		}
		chain := chainOf("pay-later")
		if chain.PTP != nil || len(chain.Confirmations) != 1 || chain.Confirmations[0].MatchState != payment.MatchUnmatched ||
			chain.Confirmations[0].ForwardState != payment.ForwardWaiting {
			t.Fatalf("unmatched chain: %+v", chain)
		}
		for _, c := range list(t, ctx, cpo.Platform, "SENDER", "/financial-advice-confirmations") {
			if c["id"] == "FAC-U" || c["id"] == "FAC-S" {
				t.Errorf("a CPO sees an unmatched confirmation: %v", c["id"])
			}
		}

		// The payment happens afterwards: its CDR links the confirmation and
		// it goes to the CPO; its amount (1.00 over the plan's) now shows as
		// the flag.
		pay(t, b, "pay-later")
		wait(t, ctx, cpo.Platform, "the late confirmation at the CPO", func() bool {
			for _, a := range cpo.ReceivedAdvice() {
				if a["id"] == "FAC-U" {
					return true
				}
			}
			return false
		})
		chain = chainOf("pay-later")
		if chain.CDRID == "" || len(chain.Confirmations) != 1 || chain.Confirmations[0].MatchState != payment.MatchMatched ||
			chain.Confirmations[0].Flag != payment.FlagAmountMismatch {
			t.Fatalf("linked chain: %+v %+v", chain, chain.Confirmations)
		}

		// A confirmation that arrives first and matches once the CDR comes
		// is cleared.
		exact, _ := ptp.Advice("FAC-X", "pay-later", "")
		exact["authorization_reference"] = "pay-exact"
		resp, err = ptp.Confirm(ctx, exact)
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		pay(t, b, "pay-exact")
		chain = chainOf("pay-exact")
		if len(chain.Confirmations) != 1 || chain.Confirmations[0].MatchState != payment.MatchMatched || chain.Confirmations[0].Flag != "" {
			t.Fatalf("cleared chain: %+v", *chain.Confirmations[0])
		}
		for _, a := range flagged(t, b.h) {
			if a.ID == "FAC-X" {
				t.Error("a matching confirmation is still flagged")
			}
		}

		for _, a := range cpo.ReceivedAdvice() {
			if a["id"] == "FAC-S" {
				t.Error("another PTP's confirmation of this payment reached the CPO")
			}
		}

		// The operator resolves a flag; the list is left with the others.
		var m payment.Advice
		for _, a := range flagged(t, b.h) {
			if a.ID == "FAC-F" {
				m = a
			}
		}
		var resolved payment.Advice
		b.h.Admin(t, http.MethodPost, fmt.Sprintf("/admin/financial-advice/%d/resolve", m.RecordID), map[string]string{"resolution": "card issuer contacted"}, &resolved)
		if resolved.ResolvedAt == nil || resolved.Resolution != "card issuer contacted" {
			t.Errorf("resolved: %+v", resolved)
		}
		for _, a := range flagged(t, b.h) {
			if a.ID == "FAC-F" {
				t.Error("a resolved confirmation is still listed")
			}
		}
		resp2 := b.h.Do(t, http.MethodPost, fmt.Sprintf("/admin/financial-advice/%d/resolve", m.RecordID), hubtest.AdminToken, []byte(`{}`), nil)
		if resp2.HTTPStatus != http.StatusOK || !strings.Contains(string(resp2.Body), `"field":"resolution"`) {
			t.Errorf("resolve without a note: %d %s", resp2.HTTPStatus, resp2.Body)
		}
	})
}

// TestAdviceValidation: confirmations are checked (payments.md §4; both
// Price shapes accepted), immutable, the PTP's to send, and each party sees
// only its own.
func TestAdviceValidation(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx, ptp, cpo := b.ctx, b.ptp, b.cpo
		good := func(id string) map[string]any {
			return map[string]any{"id": id, "authorization_reference": "ref-" + id, "currency": "INR",
				"total_costs": map[string]any{"before_taxes": 10, "taxes": []any{map[string]any{"name": "GST", "amount": 1.8}}},
				"eft_data":    []any{"RuPay", "Nr: **** 1234"}, "capture_status_code": "SUCCESS", "last_updated": ocpi.NewDateTime(time.Now())}
		}
		edit := func(f func(m map[string]any)) map[string]any {
			m := good("BAD")
			f(m)
			return m
		}
		for _, tc := range []struct {
			name  string
			body  map[string]any
			field string
		}{
			{"id", edit(func(m map[string]any) { delete(m, "id") }), "id"},
			{"reference", edit(func(m map[string]any) { m["authorization_reference"] = strings.Repeat("r", 37) }), "authorization_reference"},
			{"total", edit(func(m map[string]any) { delete(m, "total_costs") }), "total_costs"},
			{"mixed price", edit(func(m map[string]any) { m["total_costs"] = map[string]any{"excl_vat": 1, "before_taxes": 1} }), "total_costs"},
			{"negative", edit(func(m map[string]any) { m["total_costs"] = map[string]any{"excl_vat": -1} }), "total_costs.excl_vat"},
			{"tax amount", edit(func(m map[string]any) {
				m["total_costs"] = map[string]any{"before_taxes": 1, "taxes": []any{map[string]any{"name": "GST"}}}
			}), "total_costs.taxes[0].amount"},
			{"currency", edit(func(m map[string]any) { m["currency"] = "RUPEES" }), "currency"},
			{"eft line", edit(func(m map[string]any) { m["eft_data"] = []any{"ok", strings.Repeat("e", 256)} }), "eft_data[1]"},
			{"status", edit(func(m map[string]any) { m["capture_status_code"] = "CAPTURED" }), "capture_status_code"},
			{"message", edit(func(m map[string]any) { m["capture_status_message"] = "Zahlung erfolgreich ✓" }), "capture_status_message"},
			{"last_updated", edit(func(m map[string]any) { delete(m, "last_updated") }), "last_updated"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp, err := ptp.Confirm(ctx, tc.body)
				refused(t, resp, err, http.StatusOK, 2001, tc.field)
			})
		}
		if n := len(list(t, ctx, ptp.Platform, "RECEIVER", "/financial-advice-confirmations")); n != 0 {
			t.Fatalf("%d confirmations stored after refusals", n)
		}

		// Both shapes in; a repeat is 1000, a changed repeat 2001.
		resp, err := ptp.Confirm(ctx, good("F1"))
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		old := good("F2")
		old["total_costs"] = map[string]any{"excl_vat": "4.00", "incl_vat": "4.40"}
		delete(old, "eft_data")
		resp, err = ptp.Confirm(ctx, old)
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		resp, err = ptp.Confirm(ctx, old)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		old["capture_status_code"] = "PARTIAL_SUCCESS"
		resp, err = ptp.Confirm(ctx, old)
		refused(t, resp, err, http.StatusOK, 2001, "id")

		// Read back in the URL version's shape, eft_data always a list.
		var f2 map[string]any
		base := mustEndpoint(t, ptp.Platform, "RECEIVER")
		resp, err = ptp.Raw(ctx, http.MethodGet, base+"/financial-advice-confirmations/F2", nil, nil)
		data(t, hubtest.MustStatus(t, resp, err, http.StatusOK, 1000), &f2)
		schema(t, "FinancialAdviceConfirmation", f2)
		checkPrice(t, "2.2.1", "F2 on 2.2.1", f2["total_costs"], "4", "4.4")
		resp, err = ptp.Raw(ctx, http.MethodGet, strings.Replace(base, "/2.2.1/", "/2.3.0/", 1)+"/financial-advice-confirmations/F2", nil, nil)
		data(t, hubtest.MustStatus(t, resp, err, http.StatusOK, 1000), &f2)
		schema(t, "FinancialAdviceConfirmation230", f2)
		checkPrice(t, "2.3.0", "F2 on 2.3.0", f2["total_costs"], "4", "4.4")
		resp, err = ptp.Raw(ctx, http.MethodGet, base+"/financial-advice-confirmations/F1", nil, nil)
		data(t, hubtest.MustStatus(t, resp, err, http.StatusOK, 1000), &f2)
		checkPrice(t, "2.2.1", "F1 on 2.2.1", f2["total_costs"], "10", "11.8")

		// A CPO cannot send one; nobody else sees the PTP's unmatched ones;
		// the PTP pages through its own.
		resp, err = cpo.Payments(ctx, http.MethodPost, "/financial-advice-confirmations", good("F9"), nil)
		hubtest.MustStatus(t, resp, err, http.StatusMethodNotAllowed, 2001)
		resp, err = cpo.Payments(ctx, http.MethodGet, "/financial-advice-confirmations/F1", nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)
		other := b.otherPTP(t)
		if n := len(list(t, ctx, other.Platform, "RECEIVER", "/financial-advice-confirmations")); n != 0 {
			t.Errorf("another PTP sees %d confirmations", n)
		}
		resp, err = other.Confirm(ctx, good("F1")) // the same id is another PTP's own
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		resp, err = ptp.Raw(ctx, http.MethodGet, base+"/financial-advice-confirmations?limit=1", nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if resp.Header.Get("X-Total-Count") != "2" || !strings.Contains(resp.Header.Get("Link"), "rel=\"next\"") {
			t.Errorf("paging: %v", resp.Header)
		}
	})
}

// TestPreauthorisedSessionRules: a PTP's START_SESSION needs a new
// authorization_reference; a reuse is refused, one the hub refused itself
// is not used up; the PTP may only use its own tokens.
func TestPreauthorisedSessionRules(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx, ptp, cpo := b.ctx, b.ptp, b.cpo
		start := func(ref, loc, evse string) *ptpsim.Transaction {
			t.Helper()
			tx, err := ptp.Begin(ctx, ref, loc, evse, "1", "", "")
			if err != nil && tx == nil {
				t.Fatal(err)
			}
			return tx
		}
		tx := start("", "LOC1", "E1")
		hubtest.MustStatus(t, tx.Answer, nil, http.StatusOK, 1000)
		first := tx.Reference

		// The same reference again, in another case: refused before the CPO.
		tx = start(strings.ToUpper(first), "LOC1", "E1")
		refused(t, tx.Answer, nil, http.StatusOK, 2001, "authorization_reference")
		if n := len(cpo.Commands()); n != 1 {
			t.Fatalf("the CPO got %d commands, want 1", n)
		}

		// A reference an eMSP's command already carries.
		uid, resp, err := b.emsp.SendCommand(ctx, ocpi.CommandStartSession, map[string]any{"token": b.emsp.NewToken("TOK-E", "APP_USER", "NEVER"),
			"location_id": "LOC1", "evse_uid": "E2", "authorization_reference": "shared-ref"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		_ = uid
		tx = start("shared-ref", "LOC1", "E1")
		refused(t, tx.Answer, nil, http.StatusOK, 2001, "authorization_reference")

		// Refused by the hub (unknown location): the reference stays free.
		tx = start("retry-ref", "NOWHERE", "E1")
		hubtest.MustStatus(t, tx.Answer, nil, http.StatusOK, 2003)
		tx = start("retry-ref", "LOC2", "E3")
		hubtest.MustStatus(t, tx.Answer, nil, http.StatusOK, 1000)

		// Without a reference; with another party's token.
		base, _ := ptp.HubEndpoint("commands", "RECEIVER")
		body := map[string]any{"response_url": ptp.URL() + "/ocpi/2.2.1/ptp/commands/START_SESSION/x", "location_id": "LOC1",
			"token": map[string]any{"country_code": "NL", "party_id": "PAY", "uid": "C1", "type": "AD_HOC_USER", "contract_id": "C1",
				"issuer": "x", "valid": true, "whitelist": "NEVER", "last_updated": ocpi.NewDateTime(time.Now())}}
		resp, err = ptp.Raw(ctx, http.MethodPost, base+"/START_SESSION", body, nil)
		refused(t, resp, err, http.StatusOK, 2001, "authorization_reference")
		body["authorization_reference"] = "foreign-token"
		body["token"].(map[string]any)["party_id"] = "EM1"
		body["token"].(map[string]any)["country_code"] = "DE"
		resp, err = ptp.Raw(ctx, http.MethodPost, base+"/START_SESSION", body, nil)
		refused(t, resp, err, http.StatusOK, 2001, "token.party_id")
		if n := len(cpo.Commands()); n != 3 {
			t.Errorf("the CPO got %d commands, want 3 (first, eMSP's, retry)", n)
		}
		var chain payment.Chain
		b.h.Admin(t, http.MethodGet, "/admin/payments/"+first, nil, &chain)
		if chain.CommandID == "" || chain.LocationID != "LOC1" || chain.EVSEUID != "E1" {
			t.Errorf("chain of the first: %+v", chain)
		}
		resp2 := b.h.Do(t, http.MethodGet, "/admin/payments/foreign-token", hubtest.AdminToken, nil, nil)
		if resp2.HTTPStatus != http.StatusNotFound {
			t.Errorf("chain of a refused start: HTTP %d", resp2.HTTPStatus)
		}

		// A session of a PTP's token without a reference (started at the
		// charger) still reaches the PTP; it makes no payment.
		now := ocpi.NewDateTime(time.Now())
		if err := cpo.PutSession(ctx, map[string]any{"country_code": "IN", "party_id": "CP1", "id": "LOCAL-1", "start_date_time": now,
			"kwh": 0, "cdr_token": map[string]any{"country_code": "NL", "party_id": "PAY", "uid": "CARD-X", "type": "AD_HOC_USER",
				"contract_id": "CARD-X"}, "auth_method": "WHITELIST", "location_id": "LOC1", "evse_uid": "E2", "connector_id": "1",
			"currency": "INR", "status": "ACTIVE", "last_updated": now}); err != nil {
			t.Fatal(err)
		}
		wait(t, ctx, ptp.Platform, "the PTP's token's session", func() bool { return ptp.Session("IN", "CP1", "LOCAL-1") != nil })
	})
}
