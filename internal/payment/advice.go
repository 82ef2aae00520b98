package payment

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Match states of a confirmation.
const (
	MatchMatched     = "matched"
	MatchAwaitingCDR = "awaiting_cdr"
	MatchUnmatched   = "unmatched"
)

// Flags of a confirmation (the operator's attention).
const (
	FlagUnmatched        = "unmatched"
	FlagCaptureFailed    = "capture_failed"
	FlagCurrencyMismatch = "currency_mismatch"
	FlagAmountMismatch   = "amount_mismatch"
	// FlagAmountUnverified: the confirmation gives an amount incl. VAT the
	// CDR does not (its total_cost has no incl_vat), so only the amount
	// excl. VAT could be compared; the operator checks the VAT by hand.
	FlagAmountUnverified = "amount_unverified"
	// FlagDuplicateCapture: a PTP confirmed more captures for one
	// authorization_reference than the one payment it stands for.
	FlagDuplicateCapture = "duplicate_capture"
)

// Flags returns every flag reason (the label values of the flagged
// metric).
func Flags() []string {
	return []string{FlagUnmatched, FlagCaptureFailed, FlagCurrencyMismatch, FlagAmountMismatch, FlagAmountUnverified, FlagDuplicateCapture}
}

// Forward states of a confirmation.
const (
	ForwardWaiting    = "waiting"
	ForwardQueued     = "queued"
	ForwardDelivered  = "delivered"
	ForwardNotOffered = "not_offered"
)

// Advice is a stored financial advice confirmation with what the hub made
// of it, as the admin API shows it.
type Advice struct {
	RecordID               int64           `json:"record_id"`
	PTP                    Party           `json:"ptp"`
	CPO                    *Party          `json:"cpo,omitempty"`
	ID                     string          `json:"id"`
	AuthorizationReference string          `json:"authorization_reference"`
	CaptureStatusCode      string          `json:"capture_status_code"`
	MatchState             string          `json:"match_state"`
	Flag                   string          `json:"flag,omitempty"`
	FlagDetail             string          `json:"flag_detail,omitempty"`
	FlaggedAt              *ocpi.DateTime  `json:"flagged_at,omitempty"`
	ResolvedAt             *ocpi.DateTime  `json:"resolved_at,omitempty"`
	Resolution             string          `json:"resolution,omitempty"`
	ForwardState           string          `json:"forward_state"`
	Confirmation           json.RawMessage `json:"confirmation"`

	ptpPlatform int64
	currency    string
	excl, incl  string
	body        []byte
}

const adviceColumns = `pk, ptp_platform_id, ptp_country_code, ptp_party_id, id, authorization_reference, cpo_country_code, cpo_party_id,
	currency, total_excl, total_incl, capture_status_code, match_state, flag, flag_detail, flagged_at, resolved_at, resolution,
	forward_state, body`

func scanAdvice(row store.Row) (*Advice, error) {
	var a Advice
	var cpo Party
	var flagged, resolved int64
	err := row.Scan(&a.RecordID, &a.ptpPlatform, &a.PTP.CountryCode, &a.PTP.PartyID, &a.ID, &a.AuthorizationReference, &cpo.CountryCode,
		&cpo.PartyID, &a.currency, &a.excl, &a.incl, &a.CaptureStatusCode, &a.MatchState, &a.Flag, &a.FlagDetail, &flagged, &resolved,
		&a.Resolution, &a.ForwardState, &a.body)
	if err != nil {
		return nil, err
	}
	if !cpo.IsZero() {
		a.CPO = &cpo
	}
	if flagged > 0 {
		t := ocpi.FromMicros(flagged)
		a.FlaggedAt = &t
	}
	if resolved > 0 {
		t := ocpi.FromMicros(resolved)
		a.ResolvedAt = &t
	}
	a.Confirmation = a.body
	if doc, err := ocpi.ParseObject(a.body); err == nil {
		a.ID, _ = doc["id"].(string)
		a.AuthorizationReference, _ = doc["authorization_reference"].(string)
	}
	return &a, nil
}

// Confirm stores a PTP's financial advice confirmation (payments.md §4),
// links it to its payment, flags what needs the operator and forwards it to
// the CPO. created is false for a repeat of a stored one.
func (s *Service) Confirm(ctx context.Context, a Actor, raw []byte) (created bool, err error) {
	ptp, err := a.actingAs(party.RolePTP, func() error {
		return &ocpi.Error{Code: ocpi.EMETHOD, StatusCode: ocpi.StatusInvalidParams,
			Message: "financial advice confirmations are sent by the PTP that captured the payment; a CPO reads them with GET"}
	})
	if err != nil {
		return false, err
	}
	var f ocpi.FinancialAdviceConfirmation
	if err := ocpi.DecodeValid(raw, &f); err != nil {
		return false, err
	}
	body, err := ocpi.Canonical(raw, &f)
	if err != nil {
		return false, err
	}
	excl, incl := f.TotalCosts.Excl().String(), ""
	if v, ok := f.TotalCosts.Incl(); ok {
		incl = v.String()
		if cmpAmount(incl, excl) < 0 {
			return false, ocpi.Invalid("total_costs", "the amount incl. VAT ("+incl+") is less than the amount excl. VAT ("+excl+")")
		}
	}
	err = s.db.InSharedRetryUnique(ctx, func(ctx context.Context, tx *store.Tx) error {
		created = false
		var old []byte
		err := tx.QueryRow(ctx, "SELECT body FROM financial_advice WHERE ptp_country_code = $1 AND ptp_party_id = $2 AND id = $3",
			ptp.CountryCode, ptp.PartyID, ocpi.Key(f.ID)).Scan(&old)
		if err == nil {
			if sameJSON(old, body) {
				return nil
			}
			return ocpi.Invalid("id", "confirmation "+printable(f.ID)+" was already sent with other content; confirmations cannot be changed")
		}
		if !errors.Is(err, store.ErrNoRows) {
			return err
		}
		created = true
		now := s.now()
		if _, err := tx.Exec(ctx, `INSERT INTO financial_advice (ptp_platform_id, ptp_country_code, ptp_party_id, id, authorization_reference,
			currency, total_excl, total_incl, capture_status_code, match_state, forward_state, last_updated, body, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
			a.PlatformID, ptp.CountryCode, ptp.PartyID, ocpi.Key(f.ID), ocpi.Key(f.AuthorizationReference), ocpi.Key(f.Currency), excl, incl,
			f.CaptureStatusCode, MatchUnmatched, ForwardWaiting, f.LastUpdated.Micros(), string(body), now); err != nil {
			return err
		}
		s.logger.InfoContext(ctx, "financial advice confirmation received", "id", f.ID, "authorization_reference", f.AuthorizationReference,
			"ptp", ptp.CountryCode+"/"+ptp.PartyID, "capture_status_code", f.CaptureStatusCode)
		return s.settle(ctx, tx, f.AuthorizationReference, ptp)
	})
	return created, err
}

// settle brings every confirmation of a PTP for a reference in line with
// its payment: linked to the CPO, compared with the CDR, flagged or
// cleared, and forwarded once the CPO is known.
func (s *Service) settle(ctx context.Context, tx *store.Tx, ref string, ptp Party) error {
	list, err := store.QueryAll(ctx, tx, scanAdvice, "SELECT "+adviceColumns+` FROM financial_advice WHERE authorization_reference = $1
		AND ptp_country_code = $2 AND ptp_party_id = $3 ORDER BY pk`, ocpi.Key(ref), ocpi.Key(ptp.CountryCode), ocpi.Key(ptp.PartyID))
	if err != nil || len(list) == 0 {
		return err
	}
	// p stays nil when the confirmations match no payment of this PTP.
	p, found, err := findPayment(ctx, tx, ref)
	if err != nil {
		return err
	}
	if found && !samePart(p.ptp, ptp) {
		p = nil // another PTP's payment: this PTP's confirmation does not match it
	}
	captures := 0
	for _, a := range list {
		if err := s.settleOne(ctx, tx, a, p, captures); err != nil {
			return err
		}
		if a.CaptureStatusCode != ocpi.CaptureFailed {
			captures++
		}
	}
	return nil
}

// settleOne updates one confirmation against its payment (nil: unknown);
// earlier is the number of captures confirmed before it for the reference.
func (s *Service) settleOne(ctx context.Context, tx *store.Tx, a *Advice, p *payment, earlier int) error {
	match, flag, detail := evaluate(a, p, earlier)
	cpo := Party{}
	if p != nil {
		cpo = p.cpo
	}
	forward := a.ForwardState
	if forward == ForwardWaiting && !cpo.IsZero() {
		var err error
		if forward, err = s.forwardAdvice(ctx, tx, a, cpo); err != nil {
			return err
		}
	}
	now := s.now()
	flaggedAt := int64(0)
	if a.FlaggedAt != nil {
		flaggedAt = a.FlaggedAt.Micros()
	}
	newFlag := flag != "" && flag != a.Flag
	if newFlag {
		flaggedAt = now
	}
	if flag == "" {
		flaggedAt = 0
	}
	// A new reason needs the operator again, even after an earlier one was
	// resolved.
	if _, err := tx.Exec(ctx, `UPDATE financial_advice SET cpo_country_code = $1, cpo_party_id = $2, match_state = $3, flag = $4,
		flag_detail = $5, flagged_at = $6, forward_state = $7,
		resolved_at = CASE WHEN $9 THEN 0 ELSE resolved_at END WHERE pk = $8`,
		cpo.CountryCode, cpo.PartyID, match, flag, detail, flaggedAt, forward, a.RecordID, newFlag); err != nil {
		return err
	}
	switch {
	case newFlag:
		return s.flagged(ctx, tx, a, cpo, flag, detail)
	case flag == "" && a.Flag != "":
		tx.AfterCommit(func() {
			s.logger.InfoContext(ctx, "financial advice confirmation no longer flagged", "id", a.ID,
				"authorization_reference", a.AuthorizationReference, "was", a.Flag, "match_state", match)
		})
	}
	return nil
}

// evaluate decides a confirmation's match state and flag against its
// payment: unknown reference; FAILED capture; no CDR yet; currency or
// amount that differ from the CDR's total_cost (excl. VAT always, incl.
// VAT too when both give it); an amount incl. VAT the CDR cannot confirm;
// a capture after an earlier one for the same reference (earlier counts
// them).
func evaluate(a *Advice, p *payment, earlier int) (match, flag, detail string) {
	if p == nil {
		return MatchUnmatched, FlagUnmatched, "no payment with authorization_reference " + a.AuthorizationReference + " is known to the hub"
	}
	match = MatchAwaitingCDR
	if p.cdrID != "" {
		match = MatchMatched
	}
	if a.CaptureStatusCode == ocpi.CaptureFailed {
		return match, FlagCaptureFailed, "the PTP reports the capture FAILED: " + strings.TrimSpace(captureMessage(a.body))
	}
	if earlier > 0 {
		return match, FlagDuplicateCapture, "confirmation " + a.ID + " reports another capture for authorization_reference " +
			a.AuthorizationReference + ", which stands for one payment (" + itoa(earlier) + " confirmed before it)"
	}
	if p.cdrID == "" {
		return match, "", ""
	}
	if !ocpi.EqualCI(a.currency, p.cdrCC) {
		return match, FlagCurrencyMismatch, "captured in " + a.currency + ", CDR " + p.cdrID + " is in " + p.cdrCC
	}
	mismatch := func(captured, billed, what string) (string, string, string) {
		return match, FlagAmountMismatch, "captured " + captured + " " + a.currency + ", CDR " + p.cdrID + " total_cost " + billed + " " +
			p.cdrCC + " (" + what + ")"
	}
	// Each side is compared with the same side: incl. VAT when both give
	// it (what the driver paid), and excl. VAT always (both have it).
	if a.incl != "" && p.cdrIncl != "" && !sameAmount(a.incl, p.cdrIncl) {
		return mismatch(a.incl, p.cdrIncl, "incl. VAT")
	}
	if !sameAmount(a.excl, p.cdrExcl) {
		return mismatch(a.excl, p.cdrExcl, "excl. VAT")
	}
	if a.incl != "" && p.cdrIncl == "" && !sameAmount(a.incl, a.excl) {
		// The CDR's tariff VAT is per price component and not known here:
		// the comparison is incomplete rather than silently passed.
		return match, FlagAmountUnverified, "captured " + a.incl + " " + a.currency + " incl. VAT; CDR " + p.cdrID +
			" gives no incl_vat, so only the amount excl. VAT (" + a.excl + ", matching) was compared"
	}
	return match, "", ""
}

// cmpAmount compares two decimal amounts (-1, 0, 1); unparsable ones
// compare equal (they were checked before).
func cmpAmount(a, b string) int {
	x, err1 := ocpi.ParseNumber(a)
	y, err2 := ocpi.ParseNumber(b)
	if err1 != nil || err2 != nil {
		return 0
	}
	return x.Cmp(y)
}

func captureMessage(body []byte) string {
	doc, err := ocpi.ParseObject(body)
	if err != nil {
		return ""
	}
	msg, _ := doc["capture_status_message"].(string)
	if msg == "" {
		return "no message"
	}
	return msg
}

// sameAmount compares two decimal amounts exactly.
func sameAmount(a, b string) bool {
	x, err1 := ocpi.ParseNumber(a)
	y, err2 := ocpi.ParseNumber(b)
	return err1 == nil && err2 == nil && x.Cmp(y) == 0
}

// flagged records the operator's attention: the event in tx, the metric
// and the log once it committed.
func (s *Service) flagged(ctx context.Context, tx *store.Tx, a *Advice, cpo Party, flag, detail string) error {
	data := map[string]any{
		"record_id": a.RecordID, "id": a.ID, "authorization_reference": a.AuthorizationReference, "reason": flag, "detail": detail,
		"capture_status_code": a.CaptureStatusCode, "currency": a.currency, "total_costs_excl": a.excl,
		"ptp": map[string]string{"country_code": a.PTP.CountryCode, "party_id": a.PTP.PartyID},
	}
	if a.incl != "" {
		data["total_costs_incl"] = a.incl
	}
	parties := []eventParty{{Role: string(party.RolePTP), CountryCode: a.PTP.CountryCode, PartyID: a.PTP.PartyID}}
	if !cpo.IsZero() {
		data["cpo"] = map[string]string{"country_code": cpo.CountryCode, "party_id": cpo.PartyID}
		parties = append(parties, eventParty{Role: string(party.RoleCPO), CountryCode: cpo.CountryCode, PartyID: cpo.PartyID})
	}
	if err := s.emitFlagged(ctx, tx, data, parties); err != nil {
		return err
	}
	tx.AfterCommit(func() {
		s.metrics.flagged.WithLabelValues(flag).Inc()
		s.logger.WarnContext(ctx, "financial advice confirmation flagged for the operator", "reason", flag, "detail", detail,
			"id", a.ID, "authorization_reference", a.AuthorizationReference, "ptp", a.PTP.CountryCode+"/"+a.PTP.PartyID)
	})
	return nil
}

// forwardAdvice queues a confirmation for the CPO's payments RECEIVER and
// returns its forward state (not_offered when the CPO has none: it pulls).
func (s *Service) forwardAdvice(ctx context.Context, tx *store.Tx, a *Advice, cpo Party) (string, error) {
	if s.hub == nil {
		return ForwardNotOffered, nil
	}
	pl, err := s.platformWith(ctx, party.RoleCPO, cpo, Module, ocpi.InterfaceReceiver)
	if err != nil {
		return "", err
	}
	if pl == nil {
		return ForwardNotOffered, nil
	}
	err = s.hub.Enqueue(ctx, tx, pl.ID, hub.Push{Module: Module, ObjectKey: adviceKey(a.PTP, a.ID), Method: http.MethodPost,
		Path: advicePath, Body: a.body, Full: true, To: cpo, From: a.PTP, Interface: ocpi.InterfaceReceiver})
	return ForwardQueued, err
}

// advicePath is the confirmations collection under a payments endpoint.
const advicePath = "/financial-advice-confirmations"
