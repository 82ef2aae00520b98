package command

import (
	"context"
	"net/http"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// rememberSetter records, inside tx, that the requester of an accepted
// SetChargingProfile receives the session's ActiveChargingProfile updates.
func (s *Service) rememberSetter(ctx context.Context, tx *store.Tx, cur *Record) error {
	if cur.Requester.PlatformID == 0 || cur.SessionID == "" {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO profile_setters (cpo_country_code, cpo_party_id, session_id, platform_id, country_code,
		party_id, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (cpo_country_code, cpo_party_id, session_id, platform_id) DO UPDATE SET country_code = $5, party_id = $6, updated_at = $7`,
		cur.CPO.CountryCode, cur.CPO.PartyID, ocpi.Key(cur.SessionID), cur.Requester.PlatformID, cur.Requester.CountryCode,
		cur.Requester.PartyID, s.now())
	return err
}

// ProfileUpdate is an ActiveChargingProfile a CPO PUTs for a session
// (chargingprofiles.md §2: to the Sender's endpoint, here the hub's).
type ProfileUpdate struct {
	// CPOs are the caller's CPO parties; the session is one of theirs.
	CPOs          []party.PartyRef
	SessionID     string
	Body          []byte
	CorrelationID string
}

// UpdateActiveProfile relays a CPO's ActiveChargingProfile to every party
// that successfully set a profile on the session, through the hub's outbox
// (to their chargingprofiles SENDER endpoint, /{session_id}). A session no
// party set a profile on is not found: the CPO should send none.
func (s *Service) UpdateActiveProfile(ctx context.Context, u ProfileUpdate) error {
	var p ocpi.ActiveChargingProfile
	if err := ocpi.DecodeValid(u.Body, &p); err != nil {
		return err
	}
	body, err := ocpi.Canonical(u.Body, &p)
	if err != nil {
		return err
	}
	type setter struct {
		platform int64
		cpo, to  ocpiclient.Party
	}
	var setters []setter
	for _, cp := range u.CPOs {
		if cp.Role != party.RoleCPO {
			continue
		}
		cpo := ocpiclient.Party{CountryCode: ocpi.Key(cp.CountryCode), PartyID: ocpi.Key(cp.PartyID)}
		set, err := store.QueryAll(ctx, s.db.Read(), func(r store.Row) (setter, error) {
			st := setter{cpo: cpo}
			err := r.Scan(&st.platform, &st.to.CountryCode, &st.to.PartyID)
			return st, err
		}, `SELECT platform_id, country_code, party_id FROM profile_setters
			WHERE cpo_country_code = $1 AND cpo_party_id = $2 AND session_id = $3 ORDER BY platform_id`,
			cpo.CountryCode, cpo.PartyID, ocpi.Key(u.SessionID))
		if err != nil {
			return err
		}
		setters = append(setters, set...)
	}
	if len(setters) == 0 {
		return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "no party set a charging profile on session " + u.SessionID +
			" through this hub; ActiveChargingProfile updates are only sent for such sessions"}
	}
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		for _, st := range setters {
			if err := s.hub.Enqueue(ctx, tx, st.platform, hub.Push{Module: ProfilesModule,
				ObjectKey: hub.ObjectKey(st.cpo.CountryCode, st.cpo.PartyID, u.SessionID), Method: http.MethodPut,
				Path: hub.PathOf(u.SessionID), Body: body, Full: true, To: st.to, From: st.cpo,
				Interface: ocpi.InterfaceSender, CorrelationID: u.CorrelationID}); err != nil {
				return err
			}
		}
		return nil
	})
}
