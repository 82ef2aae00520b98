package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim/ptpsim"
)

// directPaymentStory is a card payment at a terminal next to the charger
// (OCPI Direct Payment): the PTP, on OCPI 2.3.0, registers a terminal; the
// CPO assigns it to an EVSE; the driver taps a card, the terminal
// pre-authorises and starts the session through the hub with its
// authorization_reference; the session and its CDR come back to the PTP,
// which captures the CDR's amount and sends the financial advice
// confirmation, relayed to the CPO in its own 2.2.1 shape.
func directPaymentStory() Story {
	return Story{Name: "Direct Payment", Needs: []string{"Directory broadcast"}, Run: func(ctx context.Context, env *Env, tl *Timeline) error {
		ptp, cpo := env.PTP, env.CPOs[0]
		const termID, locID, evse = "PTI-TERM-0001", "DEL01", "DEL01-E1"

		resp, err := ptp.CreateTerminal(ctx, ptpsim.NewTerminal(termID, nil))
		if err := status(resp, err, http.StatusCreated); err != nil {
			return fmt.Errorf("%s registers terminal %s: %w", ptp.Name(), termID, err)
		}
		tl.Step("%s (OCPI %s) registers card terminal %s at the hub", ptp.Name(), ptp.HubVersion(), termID)

		assigned := len(ptp.Assignments())
		resp, err = cpo.Payments(ctx, http.MethodPatch, "/terminals/"+termID, map[string]any{"evse_uids": []string{evse}}, nil)
		if err := status(resp, err, http.StatusOK); err != nil {
			return fmt.Errorf("%s assigns %s: %w", cpo.Name(), termID, err)
		}
		if err := ptp.Until(ctx, func() bool { return len(ptp.Assignments()) > assigned }); err != nil {
			return fmt.Errorf("the assignment did not reach %s: %w", ptp.Name(), err)
		}
		if a := ptp.Assignments()[assigned]; a["terminal_id"] != termID || !slices.Equal(strs(a["evse_uids"]), []string{evse}) {
			return fmt.Errorf("assignment at %s: %v", ptp.Name(), a)
		}
		tl.Step("%s mounts it at %s (Aerocity, New Delhi); the hub tells %s", cpo.Name(), evse, ptp.Name())

		tx, err := ptp.Begin(ctx, "", locID, evse, "1", "", "")
		if err != nil {
			return fmt.Errorf("START_SESSION from the terminal: %w", err)
		}
		if err := commandAccepted(tx.Answer, nil); err != nil {
			return fmt.Errorf("START_SESSION from the terminal: %w", err)
		}
		tl.Step("a driver taps a card: the terminal pre-authorises and sends START_SESSION (reference %s); %s answers ACCEPTED", tx.Reference, cpo.Name())
		if err := ptp.Until(ctx, func() bool { return len(ptp.Results(tx.ResultUID)) > 0 && ptp.SessionByReference(tx.Reference) != nil }); err != nil {
			return fmt.Errorf("no result or session reached %s: %w", ptp.Name(), err)
		}
		if r := ptp.Results(tx.ResultUID)[0].Body["result"]; r != "ACCEPTED" {
			return fmt.Errorf("START_SESSION result %v", r)
		}
		sid, _ := ptp.SessionByReference(tx.Reference)["id"].(string)
		tl.Step("result ACCEPTED; session %s reaches %s", sid, ptp.Name())

		resp, err = ptp.Stop(ctx, sid)
		if err := commandAccepted(resp, err); err != nil {
			return fmt.Errorf("STOP_SESSION from the terminal: %w", err)
		}
		if err := ptp.Until(ctx, func() bool {
			s := ptp.SessionByReference(tx.Reference)
			return s != nil && s["status"] == "COMPLETED" && ptp.CDRByReference(tx.Reference) != nil
		}); err != nil {
			return fmt.Errorf("session %s did not complete with a CDR at %s: %w", sid, ptp.Name(), err)
		}
		tl.Step("the driver stops at the terminal; session %s COMPLETED and its CDR reaches %s", sid, ptp.Name())

		advice, err := ptp.Advice("PTI-FAC-0001", tx.Reference, "")
		if err != nil {
			return err
		}
		before := len(cpo.ReceivedAdvice())
		resp, err = ptp.Confirm(ctx, advice)
		if err := status(resp, err, http.StatusCreated); err != nil {
			return fmt.Errorf("financial advice confirmation: %w", err)
		}
		if err := cpo.Until(ctx, func() bool { return len(cpo.ReceivedAdvice()) > before }); err != nil {
			return fmt.Errorf("the confirmation did not reach %s: %w", cpo.Name(), err)
		}
		got := cpo.ReceivedAdvice()[before]
		var total struct {
			Excl json.Number `json:"excl_vat"`
			Incl json.Number `json:"incl_vat"`
		}
		b, _ := json.Marshal(got["total_costs"])
		if err := json.Unmarshal(b, &total); err != nil || got["authorization_reference"] != tx.Reference || got["currency"] != "INR" || total.Incl == "" {
			return fmt.Errorf("the confirmation at %s: %v", cpo.Name(), got)
		}
		tl.Step("%s captures the CDR's amount and confirms it (financial advice confirmation %s)", ptp.Name(), got["id"])
		tl.Step("%s receives it in OCPI 2.2.1: ₹%s incl. VAT (₹%s excl.), capture %s", cpo.Name(), total.Incl, total.Excl, got["capture_status_code"])
		return nil
	}}
}

// status checks an answer's HTTP status and status_code 1000.
func status(resp *ocpiclient.Response, err error, httpStatus int) error {
	if resp == nil {
		return err
	}
	if resp.HTTPStatus != httpStatus || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
		return fmt.Errorf("HTTP %d %s", resp.HTTPStatus, resp.Body)
	}
	return nil
}

func strs(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, s := range list {
		if str, ok := s.(string); ok {
			out = append(out, str)
		}
	}
	return out
}
