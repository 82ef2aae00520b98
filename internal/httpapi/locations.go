package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// cpoLocationRef is kit.LocationRef for the CPO receiver: the URL's owner must be
// one of the caller's CPO parties. The short seed form without cc/pid takes
// the caller's CPO party when it has exactly one.
func cpoLocationRef(r *http.Request) (location.Ref, error) {
	ref, err := kit.LocationRef(r)
	if err != nil {
		return ref, err
	}
	return ref, ownCPO(r, &ref.CountryCode, &ref.PartyID)
}

// ownCPO checks that the URL's owner cc/pid is one of the caller's CPO
// parties; the short URL form without them takes the caller's CPO party
// when it has exactly one, and fills them in.
func ownCPO(r *http.Request, cc, pid *string) error {
	if *cc == "" {
		p, err := soleCPO(r)
		if err != nil {
			return err
		}
		*cc, *pid = p.CountryCode, p.PartyID
	}
	return kit.OwnsParty(r, party.RoleCPO, *cc, *pid)
}

// soleCPO returns the caller's only CPO party, for the URL forms without
// country_code and party_id.
func soleCPO(r *http.Request) (party.PartyRef, error) {
	c := party.CallerFrom(r.Context())
	var found []party.PartyRef
	for _, p := range c.Roles {
		if p.Role == party.RoleCPO {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return party.PartyRef{}, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "your credentials register no CPO party"}
	}
	return party.PartyRef{}, ocpi.Invalid("country_code", "your credentials hold several CPO parties: use the URL with {country_code}/{party_id}")
}

// handleCPOLocationGet serves GET on the locations receiver: the hub's copy,
// for the CPO to verify.
func (s *Server) handleCPOLocationGet(w http.ResponseWriter, r *http.Request) error {
	ref, err := cpoLocationRef(r)
	if err != nil {
		return err
	}
	return s.receiverGet(w, r, location.Module, cpoSuffix(ref), func() (json.RawMessage, error) {
		return s.cfg.Locations.Get(r.Context(), ref)
	})
}

// receiverGet serves GET on a CPO's receiver: passed on when OCPI-to-*
// names another hub's party, else answered from the hub's copy.
func (s *Server) receiverGet(w http.ResponseWriter, r *http.Request, module, suffix string, get func() (json.RawMessage, error)) error {
	if to, ok := s.kit.AddressedElsewhere(r); ok {
		return s.kit.Forward(w, r, to, module, ocpi.InterfaceReceiver, suffix, nil)
	}
	body, err := get()
	if err != nil {
		return err
	}
	s.kit.SetHubRouting(w, r)
	return s.kit.OK(w, body)
}

// receiverWrite serves PUT or PATCH on a CPO's receiver: passed on like
// receiverGet, else write stores the body the calling platform sent and
// reports whether the object is new.
func (s *Server) receiverWrite(w http.ResponseWriter, r *http.Request, module, suffix string, write func(platformID int64, raw []byte) (created bool, err error)) error {
	raw, err := kit.ReadBody(r)
	if err != nil {
		return err
	}
	if to, ok := s.kit.AddressedElsewhere(r); ok {
		return s.kit.Forward(w, r, to, module, ocpi.InterfaceReceiver, suffix, raw)
	}
	created, err := write(party.CallerFrom(r.Context()).PlatformID, raw)
	if err != nil {
		return err
	}
	s.kit.SetHubRouting(w, r)
	return s.kit.Stored(w, created)
}

// handleCPOLocationPut serves PUT of a Location, EVSE or Connector.
func (s *Server) handleCPOLocationPut(w http.ResponseWriter, r *http.Request) error {
	return s.cpoLocationWrite(w, r, s.cfg.Locations.Put)
}

// handleCPOLocationPatch serves PATCH of a Location, EVSE or Connector.
func (s *Server) handleCPOLocationPatch(w http.ResponseWriter, r *http.Request) error {
	return s.cpoLocationWrite(w, r, s.cfg.Locations.Patch)
}

func (s *Server) cpoLocationWrite(w http.ResponseWriter, r *http.Request, fn func(ctx context.Context, ch location.Change, ref location.Ref, raw []byte) (location.Result, error)) error {
	ref, err := cpoLocationRef(r)
	if err != nil {
		return err
	}
	return s.receiverWrite(w, r, location.Module, cpoSuffix(ref), func(platformID int64, raw []byte) (bool, error) {
		res, err := fn(r.Context(), location.Change{PlatformID: platformID, CorrelationID: CorrelationID(r.Context())}, ref, raw)
		return res.Created, err
	})
}

// handleCPOLocationDelete explains that the locations module has no DELETE.
func (s *Server) handleCPOLocationDelete(w http.ResponseWriter, r *http.Request) error {
	if _, err := cpoLocationRef(r); err != nil {
		return err
	}
	w.Header().Set("Allow", "GET, PUT, PATCH")
	return &ocpi.Error{Code: ocpi.EMETHOD, Message: "locations, EVSEs and connectors cannot be deleted (OCPI): PUT or PATCH the EVSE with status REMOVED"}
}

func cpoSuffix(ref location.Ref) string {
	parts := []string{ocpi.Key(ref.CountryCode), ocpi.Key(ref.PartyID), ref.LocationID}
	if ref.EVSEUID != "" {
		parts = append(parts, ref.EVSEUID)
	}
	if ref.ConnectorID != "" {
		parts = append(parts, ref.ConnectorID)
	}
	return hub.PathOf(parts...)
}

// directoryFilter reads OCPI-to-* of a directory request: the hub itself (or
// nothing) means every CPO; a CPO party restricts the directory to it.
func (s *Server) directoryFilter(r *http.Request) (cc, pid string) {
	if to, ok := s.kit.AddressedElsewhere(r); ok {
		return to.CountryCode, to.PartyID
	}
	return "", ""
}

// directoryOwner is the CPO of the directory's object id: the one OCPI-to-*
// names, else the one lookup finds (the id must then be unique across
// CPOs).
func (s *Server) directoryOwner(r *http.Request, id string, lookup func(context.Context, string) (cc, pid string, err error)) (cc, pid string, err error) {
	if cc, pid = s.directoryFilter(r); cc != "" {
		return cc, pid, nil
	}
	return lookup(r.Context(), id)
}

// handleEMSPLocations is the locations SENDER for eMSPs: the merged
// directory of every CPO (GET ALL via hub), paged.
func (s *Server) handleEMSPLocations(w http.ResponseWriter, r *http.Request) error {
	return s.kit.DirectoryPage(w, r, func(req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
		cc, pid := s.directoryFilter(r)
		items, page, err := s.cfg.Locations.List(r.Context(), location.Filter{CountryCode: cc, PartyID: pid}, req)
		for i, it := range items {
			items[i] = location.FitPublished(it)
		}
		return items, page, err
	})
}

// handleEMSPLocation serves one Location, EVSE or Connector of the
// directory. The location id alone may name locations of several CPOs:
// OCPI-to-* picks the CPO; without it the id must be unique across CPOs,
// otherwise the answer is 2001 asking for OCPI-to-*.
func (s *Server) handleEMSPLocation(w http.ResponseWriter, r *http.Request) error {
	ref, err := kit.LocationRef(r)
	if err != nil {
		return err
	}
	if ref.CountryCode, ref.PartyID, err = s.directoryOwner(r, ref.LocationID, s.cfg.Locations.Lookup); err != nil {
		return err
	}
	body, err := s.cfg.Locations.Get(r.Context(), ref)
	if err != nil {
		return err
	}
	if ref.EVSEUID == "" {
		body = location.FitPublished(body)
	}
	s.kit.SetHubRouting(w, r)
	return s.kit.OK(w, json.RawMessage(body))
}
