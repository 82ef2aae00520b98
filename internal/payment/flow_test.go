package payment_test

import (
	"encoding/json"
	"github.com/ocpihub/ocpihub/internal/sim/ptpsim"
	"net/http"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/payment"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestDirectPaymentEndToEnd drives a terminal transaction through the hub,
// with a PTP on 2.2.1 and on 2.3.0: the PTP registers and creates a
// terminal, the CPO assigns it to two EVSEs of different locations (the PTP
// gets the assignment), the PTP starts a session with an
// authorization_reference, receives the session's updates and the CDR,
// confirms what it captured, the CPO receives the confirmation, and the
// admin API shows the whole chain.
func TestDirectPaymentEndToEnd(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2.2.1", "2.3.0"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) { endToEnd(t, h, version) }, options)
		})
	}
}

func endToEnd(t *testing.T, h *hubtest.Hub, version string) {
	b := setup(t, h, version)
	ctx, ptp, cpo := b.ctx, b.ptp, b.cpo

	// The PTP creates a terminal (no CPO named: unclaimed); the CPO finds it.
	resp, err := ptp.CreateTerminal(ctx, ptpsim.NewTerminal("TERM-1", nil))
	hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
	found := false
	for _, term := range list(t, ctx, cpo.Platform, "SENDER", "/terminals") {
		found = found || term["terminal_id"] == "TERM-1"
		schema(t, "Terminal", term)
	}
	if !found {
		t.Fatal("the CPO does not see the new terminal")
	}

	// The CPO assigns it to E1 (LOC1) and E3 (LOC2); the PTP gets the
	// assignment through the outbox.
	resp, err = cpo.Payments(ctx, http.MethodPatch, "/terminals/TERM-1", map[string]any{"evse_uids": []string{"E1", "E3"}}, nil)
	hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
	wait(t, ctx, ptp.Platform, "the assignment at the PTP", func() bool { return len(ptp.Assignments()) == 1 })
	if a := ptp.Assignments()[0]; join(a["evse_uids"]) != "E1,E3" || a["terminal_id"] != "TERM-1" {
		t.Fatalf("assignment at the PTP: %v", a)
	}
	if got := ptp.Requests(sim.PathHas(http.MethodPatch, "/ptp/payments/terminals/TERM-1")); len(got) != 1 ||
		got[0].Header.Get("OCPI-from-party-id") != "CP1" || got[0].Header.Get("OCPI-to-party-id") != "PAY" {
		t.Errorf("assignment PATCH headers: %v", got)
	}
	term := terminalAt(t, ctx, cpo, "TERM-1")
	if join(term["evse_uids"]) != "E1,E3" {
		t.Fatalf("terminal at the hub: %v", term)
	}
	schema(t, "Terminal", term)

	// A card payment: the terminal reads the tariff's preauthorize_amount
	// and starts the session with its reference.
	tx, err := ptp.Begin(ctx, "", "LOC1", "E1", "1", "IN/CP1", "T1")
	if err != nil {
		t.Fatal(err)
	}
	hubtest.MustStatus(t, tx.Answer, nil, http.StatusOK, 1000)
	var answer ocpi.CommandResponse
	data(t, tx.Answer, &answer)
	if answer.Result != ocpi.CommandAccepted {
		t.Fatalf("START_SESSION answer: %s", tx.Answer.Body)
	}
	if version == "2.2.1" && tx.Preauthorized != "50" {
		t.Errorf("preauthorize_amount read by the PTP: %q, want 50", tx.Preauthorized)
	}
	if got := cpo.Commands(); len(got) != 1 || got[0].Body["authorization_reference"] != tx.Reference {
		t.Fatalf("command at the CPO: %v", got)
	}
	wait(t, ctx, ptp.Platform, "the command result", func() bool { return len(ptp.Results(tx.ResultUID)) == 1 })
	wait(t, ctx, ptp.Platform, "the session at the PTP", func() bool { return ptp.SessionByReference(tx.Reference) != nil })
	sess := ptp.SessionByReference(tx.Reference)
	id, _ := sess["id"].(string)

	// While it runs, the CPO's updates reach the PTP: energy, duration,
	// cost.
	now := ocpi.NewDateTime(time.Now())
	update := map[string]any{"kwh": 4.2, "total_cost": map[string]any{"excl_vat": 77.7, "incl_vat": 91.69}, "last_updated": now,
		"charging_periods": []any{map[string]any{"start_date_time": sess["start_date_time"],
			"dimensions": []any{map[string]any{"type": "ENERGY", "volume": 4.2}, map[string]any{"type": "TIME", "volume": 0.25}}}}}
	if err := cpo.PatchSession(ctx, id, update); err != nil {
		t.Fatal(err)
	}
	wait(t, ctx, ptp.Platform, "the session update at the PTP", func() bool {
		s := ptp.SessionByReference(tx.Reference)
		return s != nil && jsonNum(s["kwh"]) == "4.2"
	})
	sess = ptp.SessionByReference(tx.Reference)
	if periods, _ := sess["charging_periods"].([]any); len(periods) != 1 {
		t.Errorf("charging periods at the PTP: %v", sess["charging_periods"])
	}
	checkPrice(t, version, "session total_cost", sess["total_cost"], "77.7", "91.69")
	if version == "2.2.1" {
		schema(t, "Session", sess)
	}

	// The PTP stops it; the CPO completes it and sends the CDR, which
	// reaches the PTP.
	resp, err = ptp.Stop(ctx, id)
	hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
	wait(t, ctx, ptp.Platform, "the CDR at the PTP", func() bool { return ptp.CDRByReference(tx.Reference) != nil })
	cdr := ptp.CDRByReference(tx.Reference)
	checkPrice(t, version, "CDR total_cost", cdr["total_cost"], "231.25", "272.88")
	if version == "2.2.1" {
		schema(t, "CDR", cdr)
	}
	// The session's last change and the CDR travel in queues of their own.
	wait(t, ctx, ptp.Platform, "the completed session at the PTP", func() bool {
		return ptp.SessionByReference(tx.Reference)["status"] == "COMPLETED"
	})

	// The PTP confirms the capture; the CPO receives it (in its 2.2.1
	// shape) and both see it in their lists.
	advice, err := ptp.Advice("FAC-1", tx.Reference, "")
	if err != nil {
		t.Fatal(err)
	}
	resp, err = ptp.Confirm(ctx, advice)
	hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
	wait(t, ctx, cpo.Platform, "the confirmation at the CPO", func() bool { return len(cpo.ReceivedAdvice()) == 1 })
	got := cpo.ReceivedAdvice()[0]
	schema(t, "FinancialAdviceConfirmation", got)
	checkPrice(t, "2.2.1", "confirmation at the CPO", got["total_costs"], "231.25", "272.88")
	if got["authorization_reference"] != tx.Reference || len(strs(got["eft_data"])) != 5 {
		t.Errorf("confirmation at the CPO: %v", got)
	}
	cpoList := list(t, ctx, cpo.Platform, "SENDER", "/financial-advice-confirmations")
	if len(cpoList) != 1 || cpoList[0]["id"] != "FAC-1" {
		t.Errorf("the CPO's confirmations: %v", cpoList)
	}
	ptpList := list(t, ctx, ptp.Platform, "RECEIVER", "/financial-advice-confirmations")
	if len(ptpList) != 1 {
		t.Fatalf("the PTP's confirmations: %v", ptpList)
	}
	checkPrice(t, version, "confirmation listed to the PTP", ptpList[0]["total_costs"], "231.25", "272.88")
	if n := len(list(t, ctx, b.cpo2.Platform, "SENDER", "/financial-advice-confirmations")); n != 0 {
		t.Errorf("another CPO sees %d confirmations", n)
	}

	// The admin API shows the chain.
	var chain struct {
		payment.Chain
		Command struct {
			ID, State, Result string
		} `json:"command"`
	}
	h.Admin(t, http.MethodGet, "/admin/payments/"+tx.Reference, nil, &chain)
	if chain.PTP == nil || chain.PTP.PartyID != "PAY" || chain.CPO == nil || chain.CPO.PartyID != "CP1" {
		t.Errorf("chain parties: %+v %+v", chain.PTP, chain.CPO)
	}
	if len(chain.Terminals) != 1 || !json.Valid(chain.Terminals[0]) {
		t.Errorf("chain terminals: %s", chain.Terminals)
	}
	if chain.Command.ID == "" || chain.Command.ID != chain.CommandID || chain.Command.Result != ocpi.CommandAccepted {
		t.Errorf("chain command: %+v", chain.Command)
	}
	if chain.SessionID != id || len(chain.Session) == 0 || chain.CDRID == "" || len(chain.CDR) == 0 {
		t.Errorf("chain session and CDR: %s %s %s", chain.SessionID, chain.CDRID, chain.Session)
	}
	// The delivery is recorded just after the CPO answered (it may still be
	// on its way here).
	if len(chain.Confirmations) != 1 {
		t.Fatalf("chain confirmations: %d", len(chain.Confirmations))
	}
	if c := chain.Confirmations[0]; c.MatchState != payment.MatchMatched || c.Flag != "" ||
		(c.ForwardState != payment.ForwardDelivered && c.ForwardState != payment.ForwardQueued) {
		t.Errorf("chain confirmation: %+v", *c)
	}
	if n := len(b.events.Events(event.FinancialAdviceFlagged)); n != 0 {
		t.Errorf("%d flagged events for a matching confirmation", n)
	}
}

// checkPrice checks a Price received by a partner of version: the 2.3.0
// shape for 2.3.0, the 2.2.1 one otherwise, with the amounts excl and incl.
func checkPrice(t *testing.T, version, what string, v any, excl, incl string) {
	t.Helper()
	m, _ := v.(map[string]any)
	b, _ := json.Marshal(m)
	var p ocpi.PriceAny
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("%s: %v (%s)", what, err, b)
	}
	if (version == "2.3.0") != (p.V230 != nil) {
		t.Errorf("%s is in the wrong shape for %s: %s", what, version, b)
	}
	got, _ := p.Incl()
	if p.Excl().Cmp(ocpi.NewNumber(excl)) != 0 || got.Cmp(ocpi.NewNumber(incl)) != 0 {
		t.Errorf("%s = %s, want %s/%s", what, b, excl, incl)
	}
}

// jsonNum prints a decoded JSON number.
func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
