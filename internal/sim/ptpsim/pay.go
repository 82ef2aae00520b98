package ptpsim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
)

// Transaction is one card payment at a terminal: the pre-authorisation and
// its reference, then the session and CDR that come back.
type Transaction struct {
	// Reference is the authorization_reference (the payment's trace number).
	Reference string
	// Preauthorized is the amount pre-authorised at the PSP: the tariff's
	// preauthorize_amount, when the hub's directory has it.
	Preauthorized string
	// ResultUID names the command's response_url.
	ResultUID string
	// Answer is the hub's answer to the START_SESSION.
	Answer *ocpiclient.Response
}

// Begin starts a card payment the way a terminal does (payments.md §6.3):
// it reads the connector's tariff from the hub's directory when it names
// one (for its preauthorize_amount), pre-authorises, and sends
// START_SESSION with an AD_HOC_USER token of its own and a new
// authorization_reference (ref "" makes one).
func (t *PTP) Begin(ctx context.Context, ref, locationID, evseUID, connectorID, tariffCPO, tariffID string) (*Transaction, error) {
	ownCC, ownPID := t.Party()
	if ref == "" {
		t.mu.Lock()
		t.seq++
		ref = fmt.Sprintf("%s-%d-%d", strings.ToLower(ownPID), t.seq, t.Now().UnixNano()%1_000_000_000)
		t.mu.Unlock()
	}
	tx := &Transaction{Reference: ref}
	if tariffID != "" {
		if base, ok := t.HubEndpoint("tariffs", "SENDER"); ok {
			var tariff map[string]any
			hdr := http.Header{}
			if cc, pid, ok := strings.Cut(tariffCPO, "/"); ok {
				hdr.Set("OCPI-to-country-code", cc)
				hdr.Set("OCPI-to-party-id", pid)
			}
			resp, err := t.Raw(ctx, http.MethodGet, base+"/"+url.PathEscape(tariffID), nil, hdr)
			if err != nil {
				return nil, err
			}
			if resp.Envelope != nil && len(resp.Envelope.Data) > 0 {
				_ = json.Unmarshal(resp.Envelope.Data, &tariff)
			}
			if v, ok := tariff["preauthorize_amount"]; ok {
				tx.Preauthorized = fmt.Sprint(v)
			}
		}
	}
	tx.ResultUID = uuid.NewString()
	base, ok := t.HubEndpoint("commands", "RECEIVER")
	if !ok {
		return nil, fmt.Errorf("the hub lists no commands RECEIVER")
	}
	body := map[string]any{
		"response_url": t.URL() + "/ocpi/" + t.HubVersion() + "/ptp/commands/START_SESSION/" + tx.ResultUID,
		"token": map[string]any{"country_code": ownCC, "party_id": ownPID, "uid": "CARD-" + ref,
			"type": "AD_HOC_USER", "contract_id": "CARD-" + ref, "issuer": t.Name(), "valid": true, "whitelist": "NEVER",
			"last_updated": ocpi.NewDateTime(t.Now())},
		"location_id": locationID, "authorization_reference": ref,
	}
	if evseUID != "" {
		body["evse_uid"] = evseUID
	}
	if connectorID != "" {
		body["connector_id"] = connectorID
	}
	resp, err := t.Raw(ctx, http.MethodPost, base+"/START_SESSION", body, nil)
	tx.Answer = resp
	return tx, err
}

// Stop sends STOP_SESSION for a session of one of its payments.
func (t *PTP) Stop(ctx context.Context, sessionID string) (*ocpiclient.Response, error) {
	base, ok := t.HubEndpoint("commands", "RECEIVER")
	if !ok {
		return nil, fmt.Errorf("the hub lists no commands RECEIVER")
	}
	body := map[string]any{"response_url": t.URL() + "/ocpi/" + t.HubVersion() + "/ptp/commands/STOP_SESSION/" + uuid.NewString(),
		"session_id": sessionID}
	return t.Raw(ctx, http.MethodPost, base+"/STOP_SESSION", body, nil)
}

// Advice builds the financial advice confirmation of a payment whose CDR
// arrived: the amount captured (the CDR's total_cost with VAT, plus delta
// when not "") with the EFT data of a card receipt; prices in the shape of
// the PTP's version.
func (t *PTP) Advice(id, ref, delta string) (map[string]any, error) {
	cdr := t.CDRByReference(ref)
	if cdr == nil {
		return nil, fmt.Errorf("no CDR for %s yet", ref)
	}
	excl, incl, err := cdrTotal(cdr)
	if err != nil {
		return nil, err
	}
	if delta != "" {
		excl, incl = excl.Add(ocpi.NewNumber(delta)), incl.Add(ocpi.NewNumber(delta))
	}
	currency, _ := cdr["currency"].(string)
	f := map[string]any{"id": id, "authorization_reference": ref, "currency": currency, "capture_status_code": "SUCCESS",
		"capture_status_message": "Capture successful at PSP",
		"eft_data":               []any{"Mastercard", "AID: A0000000041010", "Nr: **** **** **** 1234", "SEQ: 00", "Amount: " + currency + " " + incl.String()},
		"last_updated":           ocpi.NewDateTime(t.Now())}
	if t.Is230() {
		f["total_costs"] = map[string]any{"before_taxes": json.Number(excl.String()),
			"taxes": []any{map[string]any{"name": "VAT", "amount": json.Number(incl.Sub(excl).String())}}}
	} else {
		f["total_costs"] = map[string]any{"excl_vat": json.Number(excl.String()), "incl_vat": json.Number(incl.String())}
	}
	return f, nil
}

// cdrTotal reads a CDR's total_cost in either Price shape.
func cdrTotal(cdr map[string]any) (excl, incl ocpi.Number, err error) {
	b, _ := json.Marshal(cdr["total_cost"])
	var p ocpi.PriceAny
	if err := json.Unmarshal(b, &p); err != nil || p.IsZero() {
		return excl, incl, fmt.Errorf("CDR without a usable total_cost: %s", b)
	}
	excl = p.Excl()
	incl, ok := p.Incl()
	if !ok {
		incl = excl
	}
	return excl, incl, nil
}

// Confirm posts a financial advice confirmation to the hub and returns its
// answer whatever it is.
func (t *PTP) Confirm(ctx context.Context, advice map[string]any) (*ocpiclient.Response, error) {
	return t.payments(ctx, http.MethodPost, "/financial-advice-confirmations", advice)
}
