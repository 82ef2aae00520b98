package payment

import (
	"context"
	"errors"
	"net/http"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Submitted is what became of a START_SESSION the commands relay handled.
type Submitted struct {
	// CommandID is the stored command ("" when none was stored).
	CommandID string
	// CPO is the CPO it was sent to (zero when unknown).
	CPO Party
	// Refused is true when the hub answered the command itself (an unknown
	// location, EVSE or connector): it never reached a CPO.
	Refused bool
}

// SubmitFunc hands a command to the commands relay.
type SubmitFunc func(ctx context.Context) (Submitted, error)

// payment is a direct_payments row.
type payment struct {
	ref, reference          string
	ptpPlatform             int64
	ptp, cpo                Party
	location, evse, conn    string
	commandID               string
	sessionID, cdrID        string
	cdrExcl, cdrIncl, cdrCC string
	createdAt, updatedAt    int64
}

const paymentColumns = `authorization_reference, reference, ptp_platform_id, ptp_country_code, ptp_party_id, cpo_country_code,
	cpo_party_id, location_id, evse_uid, connector_id, command_id, session_id, cdr_id, cdr_total_excl, cdr_total_incl, cdr_currency,
	created_at, updated_at`

// scanPayment reads a payment row; found is false when there is none.
func scanPayment(row store.Row) (p *payment, found bool, err error) {
	p = &payment{}
	err = row.Scan(&p.ref, &p.reference, &p.ptpPlatform, &p.ptp.CountryCode, &p.ptp.PartyID, &p.cpo.CountryCode, &p.cpo.PartyID,
		&p.location, &p.evse, &p.conn, &p.commandID, &p.sessionID, &p.cdrID, &p.cdrExcl, &p.cdrIncl, &p.cdrCC, &p.createdAt, &p.updatedAt)
	if errors.Is(err, store.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return p, true, nil
}

// findPayment reads a payment by authorization_reference; found is false
// when there is none.
func findPayment(ctx context.Context, q store.Querier, ref string) (*payment, bool, error) {
	return scanPayment(q.QueryRow(ctx, "SELECT "+paymentColumns+" FROM direct_payments WHERE authorization_reference = $1", ocpi.Key(ref)))
}

// lockPayment locks and reads a payment inside tx (found false when there
// is none).
func lockPayment(ctx context.Context, tx *store.Tx, ref string) (*payment, bool, error) {
	if found, err := tx.Lock(ctx, "direct_payments", "updated_at", "authorization_reference = $1", ocpi.Key(ref)); err != nil || !found {
		return nil, false, err
	}
	return findPayment(ctx, tx, ref)
}

func errReused(ref string) error {
	return ocpi.Invalid("authorization_reference", "\""+printable(ref)+"\" is already used by another payment; "+
		"a PTP's START_SESSION needs a new authorization_reference for every payment")
}

// StartSession relays a PTP's START_SESSION (payments.md §6.3 step 5): its
// authorization_reference is required and must be new to the hub; it is
// reserved before submit hands the command to the relay and released when
// the command could not reach a CPO (so the PTP may retry it). The command's
// answer is submit's business.
func (s *Service) StartSession(ctx context.Context, a Actor, raw []byte, submit SubmitFunc) error {
	ptp, err := a.actingAs(party.RolePTP, nil)
	if err != nil {
		return err
	}
	obj, err := ocpi.ParseObject(raw)
	if err != nil {
		_, err := submit(ctx) // the relay explains what is wrong with the body
		return err
	}
	ref, _ := obj["authorization_reference"].(string)
	c := ocpi.NewCheck("")
	if ref == "" {
		c.Fail("authorization_reference", "is required in a PTP's START_SESSION: it is the payment's reference (payments.md §6.3)")
	}
	c.CiString("authorization_reference", ref, 36, true)
	if err := c.Err(); err != nil {
		return err
	}
	if s.records != nil {
		used, err := s.records.ReferenceInUse(ctx, ref)
		if err != nil {
			return err
		}
		if used {
			return errReused(ref)
		}
	}
	loc, _ := obj["location_id"].(string)
	evse, _ := obj["evse_uid"].(string)
	conn, _ := obj["connector_id"].(string)
	now := s.now()
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO direct_payments (authorization_reference, reference, ptp_platform_id, ptp_country_code,
			ptp_party_id, location_id, evse_uid, connector_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
			ocpi.Key(ref), ref, a.PlatformID, ptp.CountryCode, ptp.PartyID, ocpi.Key(loc), ocpi.Key(evse), ocpi.Key(conn), now)
		return err
	})
	if store.IsUniqueViolation(err) {
		return errReused(ref)
	}
	if err != nil {
		return err
	}
	out, serr := submit(ctx)
	bg := context.WithoutCancel(ctx)
	if out.Refused || (serr != nil && ocpi.ErrorCode(serr) != ocpi.ETIMEOUT) {
		// The CPO never got it (a timeout may have reached it: then the
		// reference stays taken).
		if err := s.db.InTx(bg, func(ctx context.Context, tx *store.Tx) error {
			_, err := tx.Exec(ctx, "DELETE FROM direct_payments WHERE authorization_reference = $1 AND session_id = '' AND cdr_id = ''", ocpi.Key(ref))
			return err
		}); err != nil {
			s.logger.ErrorContext(ctx, "could not release an authorization_reference", "authorization_reference", ref, "error", err)
		}
		return serr
	}
	err = s.db.InTx(bg, func(ctx context.Context, tx *store.Tx) error {
		cpo := keyParty(out.CPO)
		_, err := tx.Exec(ctx, `UPDATE direct_payments SET command_id = $1, cpo_country_code = CASE WHEN cpo_country_code = '' THEN $2 ELSE cpo_country_code END,
			cpo_party_id = CASE WHEN cpo_party_id = '' THEN $3 ELSE cpo_party_id END, updated_at = $4 WHERE authorization_reference = $5`,
			out.CommandID, cpo.CountryCode, cpo.PartyID, s.now(), ocpi.Key(ref))
		return err
	})
	if err != nil {
		s.logger.ErrorContext(ctx, "could not record a payment's command", "authorization_reference", ref, "error", err)
	}
	s.logger.InfoContext(ctx, "pre-authorised session requested", "authorization_reference", ref, "ptp", ptp.CountryCode+"/"+ptp.PartyID,
		"command_id", out.CommandID, "location_id", loc, "evse_uid", evse)
	return serr
}

// Change is a stored change of a session, or a new CDR, as the sessions
// and CDRs modules report it.
type Change struct {
	CPO                    Party
	ID                     string
	Owner                  Party // the token's owner
	AuthorizationReference string
	LocationID, EVSEUID    string
	ConnectorID            string
	// Body is the whole stored session or CDR.
	Body []byte
}

// SessionChanged links a session to its payment and pushes it, whole, to
// the PTP's sessions receiver; it runs inside the transaction of the change.
func (s *Service) SessionChanged(ctx context.Context, tx *store.Tx, ch Change) error {
	push := hub.Push{Module: sessionsModule, ObjectKey: hub.ObjectKey(ch.CPO.CountryCode, ch.CPO.PartyID, ch.ID),
		Method: http.MethodPut, Path: hub.PathOf(ocpi.Key(ch.CPO.CountryCode), ocpi.Key(ch.CPO.PartyID), ch.ID), Body: ch.Body}
	p, err := s.linkChange(ctx, tx, ch, push)
	if p == nil || err != nil {
		return err
	}
	if p.sessionID == "" || ocpi.EqualCI(p.sessionID, ch.ID) {
		if _, err := tx.Exec(ctx, "UPDATE direct_payments SET session_id = $1, updated_at = $2 WHERE authorization_reference = $3",
			ch.ID, s.now(), p.ref); err != nil {
			return err
		}
		p.sessionID = ch.ID
	}
	if err := s.pushToPTP(ctx, tx, p, push); err != nil {
		return err
	}
	return s.settle(ctx, tx, p.reference, p.ptp)
}

// CDRChange is a new CDR, as the CDRs module reports it.
type CDRChange struct {
	Change
	Currency  string
	TotalCost ocpi.Price
	// Credit is true for a credit CDR: it is passed on but does not replace
	// the payment's CDR.
	Credit bool
}

// CDRCreated links a CDR to its payment (its total_cost is what
// confirmations are compared with), pushes it to the PTP's cdrs receiver
// and settles the payment's confirmations; it runs inside the transaction
// that stores the CDR.
func (s *Service) CDRCreated(ctx context.Context, tx *store.Tx, ch CDRChange) error {
	push := hub.Push{Module: cdrsModule, ObjectKey: hub.ObjectKey(ch.CPO.CountryCode, ch.CPO.PartyID, ch.ID),
		Method: http.MethodPost, Body: ch.Body}
	p, err := s.linkChange(ctx, tx, ch.Change, push)
	if p == nil || err != nil {
		return err
	}
	if !ch.Credit {
		incl := ""
		if ch.TotalCost.InclVAT != nil {
			incl = ch.TotalCost.InclVAT.String()
		}
		if _, err := tx.Exec(ctx, `UPDATE direct_payments SET cdr_id = $1, cdr_total_excl = $2, cdr_total_incl = $3, cdr_currency = $4,
			updated_at = $5 WHERE authorization_reference = $6`, ch.ID, ch.TotalCost.ExclVAT.String(), incl, ocpi.Key(ch.Currency), s.now(), p.ref); err != nil {
			return err
		}
	}
	if err := s.pushToPTP(ctx, tx, p, push); err != nil {
		return err
	}
	return s.settle(ctx, tx, p.reference, p.ptp)
}

// linkChange finds (and locks) the payment of a session or CDR (see link).
// nil: no payment; a session or CDR of a PTP's token that is no payment's
// is queued (push) for the PTP all the same.
func (s *Service) linkChange(ctx context.Context, tx *store.Tx, ch Change, push hub.Push) (*payment, error) {
	// Only a PTP's token makes a payment (link checks the owner): every
	// other session or CDR costs one indexed read here.
	if ok, err := s.route.HostsRole(ctx, party.RolePTP, ch.Owner.CountryCode, ch.Owner.PartyID); err != nil || !ok {
		return nil, err
	}
	p, err := s.link(ctx, tx, ch.AuthorizationReference, ch.CPO, ch.Owner, ch.LocationID, ch.EVSEUID, ch.ConnectorID)
	if p != nil || err != nil {
		return p, err
	}
	return nil, s.pushToOwner(ctx, tx, ch.CPO, ch.Owner, push)
}

// link finds (and locks) the payment a session or CDR of a PTP's token
// carrying ref belongs to: the one started through the hub, when the CPO
// and the token's owner agree with it; or a payment the PTP started with the
// CPO directly (it is recorded now). nil: not a payment.
func (s *Service) link(ctx context.Context, tx *store.Tx, ref string, cpo, owner Party, loc, evse, conn string) (*payment, error) {
	if ref == "" {
		return nil, nil
	}
	cpo, owner = keyParty(cpo), keyParty(owner)
	p, _, err := lockPayment(ctx, tx, ref) // p nil: not found
	if err != nil {
		return nil, err
	}
	if p == nil {
		pl, found, err := s.route.Platform(ctx, party.RolePTP, owner)
		if err != nil || !found {
			return nil, err
		}
		now := s.now()
		if _, err := tx.Exec(ctx, `INSERT INTO direct_payments (authorization_reference, reference, ptp_platform_id, ptp_country_code,
			ptp_party_id, cpo_country_code, cpo_party_id, location_id, evse_uid, connector_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`, ocpi.Key(ref), ref, pl.ID, owner.CountryCode, owner.PartyID,
			cpo.CountryCode, cpo.PartyID, ocpi.Key(loc), ocpi.Key(evse), ocpi.Key(conn), now); err != nil {
			return nil, err
		}
		p, _, err := findPayment(ctx, tx, ref) // just inserted: found
		return p, err
	}
	if !samePart(p.ptp, owner) || (!p.cpo.IsZero() && !samePart(p.cpo, cpo)) {
		s.logger.WarnContext(ctx, "a session or CDR carries a payment's authorization_reference but another token or CPO; not linked",
			"authorization_reference", ref, "cpo", cpo.CountryCode+"/"+cpo.PartyID, "token_owner", owner.CountryCode+"/"+owner.PartyID)
		return nil, nil
	}
	if p.cpo.IsZero() || p.location == "" {
		if _, err := tx.Exec(ctx, `UPDATE direct_payments SET cpo_country_code = $1, cpo_party_id = $2,
			location_id = CASE WHEN location_id = '' THEN $3 ELSE location_id END, evse_uid = CASE WHEN evse_uid = '' THEN $4 ELSE evse_uid END,
			connector_id = CASE WHEN connector_id = '' THEN $5 ELSE connector_id END, updated_at = $6 WHERE authorization_reference = $7`,
			cpo.CountryCode, cpo.PartyID, ocpi.Key(loc), ocpi.Key(evse), ocpi.Key(conn), s.now(), p.ref); err != nil {
			return nil, err
		}
		p.cpo = cpo
	}
	return p, nil
}

// pushToOwner queues a session or CDR that is no payment's for its token's
// owner, a PTP.
func (s *Service) pushToOwner(ctx context.Context, tx *store.Tx, cpo, owner Party, push hub.Push) error {
	return s.pushToPTP(ctx, tx, &payment{ptp: keyParty(owner), cpo: keyParty(cpo)}, push)
}

// pushToPTP queues a session or CDR for the payment's PTP, unless the
// sessions and CDRs modules route it there already (the PTP's party is also
// an eMSP's) or the PTP has no receiver for it (it pulls).
func (s *Service) pushToPTP(ctx context.Context, tx *store.Tx, p *payment, push hub.Push) error {
	if s.hub == nil {
		return nil
	}
	if _, emsp, err := s.route.Platform(ctx, party.RoleEMSP, p.ptp); err != nil || emsp {
		return err
	}
	pl, err := s.platformWith(ctx, party.RolePTP, p.ptp, push.Module, ocpi.InterfaceReceiver)
	if err != nil || pl == nil {
		return err
	}
	push.Full, push.To, push.From = true, p.ptp, p.cpo
	return s.hub.Enqueue(ctx, tx, pl.ID, push)
}
