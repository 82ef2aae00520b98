package payment

import (
	"context"
	"net/http"
	"net/url"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Activate forwards a CPO's activation request (a terminal built into a
// charger, named by its reference; payments.md §6.2) to a PTP: the one the
// request addresses with OCPI-to-*, or the only PTP connected. The PTP's
// answer is returned as it came; the PTP then creates the terminal with its
// new terminal_id.
func (s *Service) Activate(ctx context.Context, a Actor, raw []byte) (*hub.Forwarded, error) {
	cpo, err := a.actingAs(party.RoleCPO, func() error {
		return &ocpi.Error{Code: ocpi.EMETHOD, StatusCode: ocpi.StatusInvalidParams,
			Message: "activation is a CPO's request to a PTP; a PTP creates the activated terminal with POST payments/terminals"}
	})
	if err != nil {
		return nil, err
	}
	var t ocpi.Terminal
	if err := ocpi.Decode(raw, &t); err != nil {
		return nil, err
	}
	c := ocpi.NewCheck("")
	t.Check(c, false)
	c.Required("reference", t.Reference != "")
	if err := c.Err(); err != nil {
		return nil, err
	}
	if _, err := s.checkTargets(ctx, cpo, t.LocationIDs, t.EVSEUIDs, "your"); err != nil {
		return nil, err
	}
	ptp, err := s.activator(ctx, a.To)
	if err != nil {
		return nil, err
	}
	s.logger.InfoContext(ctx, "terminal activation requested", "cpo", cpo.CountryCode+"/"+cpo.PartyID,
		"ptp", ptp.CountryCode+"/"+ptp.PartyID, "reference", t.Reference)
	return s.hub.Forward(ctx, hub.ForwardRequest{From: cpo, To: ptp, Module: Module, Interface: ocpi.InterfaceSender,
		Method: http.MethodPost, Suffix: "/terminals/activate", Body: raw, CorrelationID: a.CorrelationID})
}

// activator is the PTP an activation goes to.
func (s *Service) activator(ctx context.Context, to Party) (Party, error) {
	if !to.IsZero() {
		_, known, err := s.route.Platform(ctx, party.RolePTP, to)
		if err != nil {
			return Party{}, err
		}
		if !known {
			return Party{}, ocpi.Errorf(ocpi.EUNKNOWNRECEIVER, "no PTP %s/%s is connected to this hub", printable(to.CountryCode), printable(to.PartyID))
		}
		return keyParty(to), nil
	}
	found, err := s.route.Connected(ctx, party.RolePTP)
	if err != nil {
		return Party{}, err
	}
	switch len(found) {
	case 0:
		return Party{}, ocpi.Errorf(ocpi.EUNKNOWNRECEIVER, "no PTP is connected to this hub")
	case 1:
		return found[0], nil
	}
	return Party{}, &ocpi.Error{Code: ocpi.EINVALID, Field: "OCPI-to-party-id", Issue: "several PTPs are connected: name one",
		Message: "several PTPs are connected to this hub: name the one to activate the terminal with OCPI-to-country-code and OCPI-to-party-id"}
}

// Deactivate queues a CPO's deactivation request (a broken terminal, an
// address change; payments.md §2.1) for the terminal's PTP and records when
// it was asked.
func (s *Service) Deactivate(ctx context.Context, a Actor, id string) error {
	if !a.has(party.RoleCPO) {
		if a.has(party.RolePTP) {
			return &ocpi.Error{Code: ocpi.EMETHOD, StatusCode: ocpi.StatusInvalidParams,
				Message: "deactivation is a CPO's request to the terminal's PTP"}
		}
		return errNotPayments()
	}
	c := ocpi.NewCheck("")
	c.CiString("terminal_id", id, 36, true)
	if err := c.Err(); err != nil {
		return err
	}
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		cur, found, err := lockTerminal(ctx, tx, id)
		if err != nil {
			return err
		}
		if !found || !a.owns(party.RoleCPO, cur.cpo) {
			return errUnknownTerminal(id)
		}
		p, err := s.platformWith(ctx, party.RolePTP, cur.ptp, Module, ocpi.InterfaceSender)
		if err != nil {
			return err
		}
		if p == nil {
			return ocpi.Errorf(ocpi.EUNKNOWNRECEIVER, "the terminal's PTP %s/%s offers no payments interface to relay the deactivation to",
				cur.ptp.CountryCode, cur.ptp.PartyID)
		}
		if _, err := tx.Exec(ctx, "UPDATE terminals SET deactivation_requested_at = $1 WHERE pk = $2", s.now(), cur.pk); err != nil {
			return err
		}
		s.logger.InfoContext(ctx, "terminal deactivation requested", "terminal_id", cur.id, "cpo", cur.cpo.CountryCode+"/"+cur.cpo.PartyID)
		return s.hub.Enqueue(ctx, tx, p.ID, hub.Push{Module: Module, ObjectKey: ptpTerminalKey(cur.id), Method: http.MethodPost,
			Path: "/terminals/" + url.PathEscape(cur.id) + "/deactivate", To: cur.ptp, From: cur.cpo, Interface: ocpi.InterfaceSender,
			CorrelationID: a.CorrelationID})
	})
}
