package payment

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Chain is everything the hub knows of one payment, for the operator:
// terminal → command → session → CDR → confirmations.
type Chain struct {
	AuthorizationReference string `json:"authorization_reference"`
	PTP                    *Party `json:"ptp,omitempty"`
	PTPPlatformID          int64  `json:"ptp_platform_id,omitempty"`
	CPO                    *Party `json:"cpo,omitempty"`
	LocationID             string `json:"location_id,omitempty"`
	EVSEUID                string `json:"evse_uid,omitempty"`
	ConnectorID            string `json:"connector_id,omitempty"`
	// Terminals are the PTP's terminals serving the EVSE (or its whole
	// location).
	Terminals []json.RawMessage `json:"terminals"`
	CommandID string            `json:"command_id,omitempty"`
	Command   any               `json:"command,omitempty"`
	SessionID string            `json:"session_id,omitempty"`
	Session   json.RawMessage   `json:"session,omitempty"`
	CDRID     string            `json:"cdr_id,omitempty"`
	CDR       json.RawMessage   `json:"cdr,omitempty"`
	// Confirmations are every confirmation naming the reference (an
	// unmatched one of another PTP included).
	Confirmations []*Advice      `json:"confirmations"`
	CreatedAt     *ocpi.DateTime `json:"created_at,omitempty"`
	UpdatedAt     *ocpi.DateTime `json:"updated_at,omitempty"`
}

// Chain returns the chain of a payment by authorization_reference; a
// reference known only from confirmations has no payment part.
func (s *Service) Chain(ctx context.Context, ref string) (*Chain, error) {
	q := s.db.ReadIn(ctx)
	p, found, err := findPayment(ctx, q, ref)
	if err != nil {
		return nil, err
	}
	ch := &Chain{AuthorizationReference: ref, Terminals: []json.RawMessage{}, Confirmations: []*Advice{}}
	advice, err := store.QueryAll(ctx, q, scanAdvice, "SELECT "+adviceColumns+" FROM financial_advice WHERE authorization_reference = $1 ORDER BY pk", ocpi.Key(ref))
	if err != nil {
		return nil, err
	}
	ch.Confirmations = append(ch.Confirmations, advice...)
	if !found {
		if len(ch.Confirmations) == 0 {
			return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "no payment or confirmation has authorization_reference " + printable(ref)}
		}
		return ch, nil
	}
	ch.AuthorizationReference = p.reference
	ch.PTP, ch.PTPPlatformID = &p.ptp, p.ptpPlatform
	if !p.cpo.IsZero() {
		ch.CPO = &p.cpo
	}
	ch.LocationID, ch.EVSEUID, ch.ConnectorID = p.location, p.evse, p.conn
	ch.CommandID, ch.SessionID, ch.CDRID = p.commandID, p.sessionID, p.cdrID
	created, updated := ocpi.FromMicros(p.createdAt), ocpi.FromMicros(p.updatedAt)
	ch.CreatedAt, ch.UpdatedAt = &created, &updated
	if ch.Terminals, err = terminalsServing(ctx, q, p); err != nil {
		return nil, err
	}
	if s.records == nil {
		return ch, nil
	}
	// The other modules' records are looked up one by one; a missing one
	// stays out of the chain (the ids say what is expected).
	if p.commandID != "" {
		if c, err := s.records.Command(ctx, p.commandID); err == nil {
			ch.Command = c
		} else if !ocpi.IsNotFound(err) {
			return nil, err
		}
	}
	if p.sessionID != "" {
		if b, err := s.records.Session(ctx, p.cpo, p.sessionID); err == nil {
			ch.Session = b
		} else if !ocpi.IsNotFound(err) {
			return nil, err
		}
	}
	if p.cdrID != "" {
		if b, err := s.records.CDR(ctx, p.cpo, p.cdrID); err == nil {
			ch.CDR = b
		} else if !ocpi.IsNotFound(err) {
			return nil, err
		}
	}
	return ch, nil
}

// terminalsServing lists the PTP's terminals that serve the payment's EVSE
// or its whole location.
func terminalsServing(ctx context.Context, q store.Querier, p *payment) ([]json.RawMessage, error) {
	out := []json.RawMessage{}
	if p.location == "" {
		return out, nil
	}
	bodies, err := store.QueryAll(ctx, q, func(r store.Row) (json.RawMessage, error) {
		var pk int64
		var b []byte
		err := r.Scan(&pk, &b)
		return b, err
	}, `SELECT DISTINCT t.pk, t.body FROM terminals t JOIN terminal_targets g ON g.terminal_pk = t.pk
		WHERE t.ptp_country_code = $1 AND t.ptp_party_id = $2 AND g.location_id = $3 AND (g.evse_uid = '' OR g.evse_uid = $4)
		ORDER BY t.pk`, p.ptp.CountryCode, p.ptp.PartyID, p.location, p.evse)
	if err != nil {
		return nil, err
	}
	return append(out, bodies...), nil
}

// Flagged returns the confirmations that need the operator (flagged, not
// resolved), most recently flagged first, and how many there are.
func (s *Service) Flagged(ctx context.Context, limit, offset int) ([]*Advice, int64, error) {
	out, total, err := store.CountedPage(ctx, s.db.ReadIn(ctx), adviceColumns, "financial_advice", " WHERE flag <> '' AND resolved_at = 0",
		"flagged_at DESC, pk DESC", store.PageLimit(limit, 100), offset, nil, scanAdvice)
	if err != nil {
		return nil, 0, err
	}
	if out == nil {
		out = []*Advice{}
	}
	return out, total, nil
}

// Resolve marks a flagged confirmation as dealt with by the operator; it
// leaves the flagged list (and comes back if a new reason appears).
func (s *Service) Resolve(ctx context.Context, recordID int64, note string) (*Advice, error) {
	note = strings.TrimSpace(note)
	c := ocpi.NewCheck("")
	c.String("resolution", note, 500, true)
	if err := c.Err(); err != nil {
		return nil, err
	}
	var out *Advice
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		n, err := tx.Exec(ctx, "UPDATE financial_advice SET resolved_at = $1, resolution = $2 WHERE pk = $3 AND flag <> ''", s.now(), note, recordID)
		if err != nil {
			return err
		}
		if n == 0 {
			return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "no flagged confirmation " + itoa(int(recordID))}
		}
		out, err = scanAdvice(tx.QueryRow(ctx, "SELECT "+adviceColumns+" FROM financial_advice WHERE pk = $1", recordID))
		return err
	})
	return out, err
}
