package legacyapi

import (
	"encoding/json"
	"net/http"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/tariff"
)

// legacyLocationRef reads a legacy CPO's location URL and checks that the
// party in it is the caller's CPO party.
func legacyLocationRef(r *http.Request) (location.Ref, error) {
	owner, err := kit.OwnerOf(r, party.RoleCPO)
	if err != nil {
		return location.Ref{}, err
	}
	ref := location.Ref{CountryCode: owner.CountryCode, PartyID: owner.PartyID, LocationID: r.PathValue("location_id"),
		EVSEUID: r.PathValue("evse_uid"), ConnectorID: r.PathValue("connector_id")}
	c := ocpi.NewCheck("")
	c.CiString("location_id", ref.LocationID, 36, true)
	c.CiString("evse_uid", ref.EVSEUID, 36, false)
	c.CiString("connector_id", ref.ConnectorID, 36, false)
	return ref, c.Err()
}

// locationChange is the change a location write by the calling platform
// makes.
func locationChange(r *http.Request) location.Change {
	c := party.CallerFrom(r.Context())
	return location.Change{PlatformID: c.PlatformID, CorrelationID: kit.CorrelationID(r.Context())}
}

// handleLegacyCPOLocationGet serves the hub's copy of a legacy CPO's
// Location, EVSE or Connector, in its version.
func (s *handlers) handleLegacyCPOLocationGet(w http.ResponseWriter, r *http.Request) error {
	ref, err := legacyLocationRef(r)
	if err != nil {
		return err
	}
	return s.legacyLocationAnswer(w, r, ref)
}

// legacyLocationAnswer answers with the stored object ref names, converted
// for the caller's version.
func (s *handlers) legacyLocationAnswer(w http.ResponseWriter, r *http.Request, ref location.Ref) error {
	body, err := s.cfg.Locations.Get(r.Context(), ref)
	if err != nil {
		return err
	}
	v := Version(r.URL.Path)
	out, loss, ok, err := v211.LocationOut(v, ref.Level(), body)
	if err != nil {
		return err
	}
	s.cfg.LegacyRecorder.Lost(r.Context(), v, location.Module, ref.Level()+" "+ref.String(), loss)
	if !ok {
		return &ocpi.Error{Code: ocpi.EUNKNOWNLOCATION, Message: "the " + ref.Level() + " " + ref.String() + " has no OCPI " + v + " form: " + loss.String()}
	}
	return s.legacyOK(w, json.RawMessage(out))
}

// handleLegacyCPOLocationPut stores a legacy CPO's Location, EVSE or
// Connector.
func (s *handlers) handleLegacyCPOLocationPut(w http.ResponseWriter, r *http.Request) error {
	ref, raw, err := kit.RefAndBody(r, legacyLocationRef)
	if err != nil {
		return err
	}
	v := Version(r.URL.Path)
	body, loss, err := v211.LocationIn(v, ref.Level(), raw, ref.CountryCode, ref.PartyID, s.Clock.Now())
	if err != nil {
		return err
	}
	s.cfg.LegacyRecorder.Lost(r.Context(), v, location.Module, ref.Level()+" "+ref.String(), loss)
	res, err := s.cfg.Locations.Put(r.Context(), locationChange(r), ref, body)
	if err != nil {
		return err
	}
	return s.legacyStored(w, res.Created)
}

// handleLegacyCPOLocationPatch merges a legacy CPO's PATCH.
func (s *handlers) handleLegacyCPOLocationPatch(w http.ResponseWriter, r *http.Request) error {
	ref, raw, err := kit.RefAndBody(r, legacyLocationRef)
	if err != nil {
		return err
	}
	v := Version(r.URL.Path)
	body, loss, err := v211.LocationPatchIn(v, ref.Level(), raw, s.Clock.Now())
	if err != nil {
		return err
	}
	s.cfg.LegacyRecorder.Lost(r.Context(), v, location.Module, ref.Level()+" "+ref.String(), loss)
	ch := locationChange(r)
	err = writePatch(raw, body, func(body []byte) error {
		_, err := s.cfg.Locations.Patch(r.Context(), ch, ref, body)
		return err
	})
	if err != nil {
		return err
	}
	return s.legacyStored(w, false)
}

// handleLegacyEMSPLocations is the locations sender for legacy eMSPs: the
// directory, each location converted; unpublished ones and those 2.1.1
// cannot express are left out of the page (X-Total-Count still counts
// them: the directory is not filtered before paging).
func (s *handlers) handleLegacyEMSPLocations(w http.ResponseWriter, r *http.Request) error {
	list := func(req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
		return s.cfg.Locations.List(r.Context(), location.Filter{}, req)
	}
	return s.legacyDirectory(w, r, location.Module, "directory location", list, func(v string, it []byte) ([]byte, v211.Loss, bool, error) {
		return v211.LocationOut(v, v211.LevelLocation, it)
	})
}

// handleLegacyEMSPLocation serves one Location, EVSE or Connector of the
// directory to a legacy eMSP. Legacy requests carry no OCPI-to-*: the
// location id must be unique across CPOs.
func (s *handlers) handleLegacyEMSPLocation(w http.ResponseWriter, r *http.Request) error {
	ref, err := kit.LocationRef(r)
	if err != nil {
		return err
	}
	if ref.CountryCode, ref.PartyID, err = s.cfg.Locations.Lookup(r.Context(), ref.LocationID); err != nil {
		return err
	}
	return s.legacyLocationAnswer(w, r, ref)
}

// legacyTariffRef reads a legacy CPO's tariff URL.
func legacyTariffRef(r *http.Request) (tariff.Ref, error) {
	owner, err := kit.OwnerOf(r, party.RoleCPO)
	if err != nil {
		return tariff.Ref{}, err
	}
	ref := tariff.Ref{CountryCode: owner.CountryCode, PartyID: owner.PartyID, ID: r.PathValue("tariff_id")}
	c := ocpi.NewCheck("")
	c.CiString("tariff_id", ref.ID, 36, true)
	return ref, c.Err()
}

// tariffChange is the change a tariff write by the calling platform makes.
func (s *handlers) tariffChange(r *http.Request) tariff.Change {
	c := party.CallerFrom(r.Context())
	return tariff.Change{PlatformID: c.PlatformID, CorrelationID: kit.CorrelationID(r.Context())}
}

// handleLegacyCPOTariffGet serves the hub's copy of a legacy CPO's tariff.
func (s *handlers) handleLegacyCPOTariffGet(w http.ResponseWriter, r *http.Request) error {
	ref, err := legacyTariffRef(r)
	if err != nil {
		return err
	}
	body, err := s.cfg.Tariffs.Get(r.Context(), ref)
	if err != nil {
		return err
	}
	v := Version(r.URL.Path)
	out, loss, ok, err := v211.TariffOut(v, body)
	if err != nil {
		return err
	}
	s.cfg.LegacyRecorder.Lost(r.Context(), v, tariff.Module, "tariff "+ref.ID, loss)
	if !ok {
		return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "tariff " + ref.ID + " has no OCPI " + v + " form: " + loss.String()}
	}
	return s.legacyOK(w, json.RawMessage(out))
}

// handleLegacyCPOTariffPut stores a legacy CPO's tariff.
func (s *handlers) handleLegacyCPOTariffPut(w http.ResponseWriter, r *http.Request) error {
	ref, raw, err := kit.RefAndBody(r, legacyTariffRef)
	if err != nil {
		return err
	}
	body, err := v211.TariffIn(Version(r.URL.Path), raw, ref.CountryCode, ref.PartyID, s.Clock.Now())
	if err != nil {
		return err
	}
	created, _, err := s.cfg.Tariffs.Put(r.Context(), s.tariffChange(r), ref, body)
	if err != nil {
		return err
	}
	return s.legacyStored(w, created)
}

// handleLegacyCPOTariffPatch merges a legacy CPO's tariff PATCH (2.1.1 has
// one; 2.2.1 does not) into the stored tariff, under its row lock
// (tariff.Service.Patch). A PATCH without last_updated is stamped with the
// time it arrived.
func (s *handlers) handleLegacyCPOTariffPatch(w http.ResponseWriter, r *http.Request) error {
	ref, raw, err := kit.RefAndBody(r, legacyTariffRef)
	if err != nil {
		return err
	}
	patch, _, err := s.legacyPatch(r, tariff.Module, raw)
	if err != nil {
		return err
	}
	// The owner is the URL's (legacy tariffs have no owner fields).
	delete(patch, "country_code")
	delete(patch, "party_id")
	_, err = s.cfg.Tariffs.Patch(r.Context(), s.tariffChange(r), ref, patch)
	err = unstampedStale(sentLastUpdated(raw), err, func(lu string) error {
		patch["last_updated"] = lu
		_, err := s.cfg.Tariffs.Patch(r.Context(), s.tariffChange(r), ref, patch)
		return err
	})
	if err != nil {
		return err
	}
	return s.legacyStored(w, false)
}

// handleLegacyCPOTariffDelete deletes a legacy CPO's tariff.
func (s *handlers) handleLegacyCPOTariffDelete(w http.ResponseWriter, r *http.Request) error {
	ref, err := legacyTariffRef(r)
	if err != nil {
		return err
	}
	if _, err := s.cfg.Tariffs.Delete(r.Context(), s.tariffChange(r), ref); err != nil {
		return err
	}
	return s.legacyOK(w, nil)
}

// handleLegacyEMSPTariffs is the tariffs sender for legacy eMSPs.
func (s *handlers) handleLegacyEMSPTariffs(w http.ResponseWriter, r *http.Request) error {
	list := func(req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
		return s.cfg.Tariffs.List(r.Context(), tariff.Filter{}, req)
	}
	return s.legacyDirectory(w, r, tariff.Module, "directory tariff", list, v211.TariffOut)
}

// legacyDirectory is legacySender for a directory module (locations,
// tariffs): each object is converted for the caller's version, and what the
// conversion drops is recorded as lost for module.
func (s *handlers) legacyDirectory(w http.ResponseWriter, r *http.Request, module, what string, list func(ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error),
	convert func(v string, body []byte) ([]byte, v211.Loss, bool, error)) error {
	v := Version(r.URL.Path)
	return s.legacySender(w, r, list, func(it json.RawMessage) ([]byte, bool, error) {
		b, loss, ok, err := convert(v, it)
		if err != nil {
			return nil, false, err
		}
		s.cfg.LegacyRecorder.Lost(r.Context(), v, module, what, loss)
		return b, ok, nil
	})
}

// legacySender answers a legacy sender's GET: a page of the stored objects
// list gives, each converted by out (which leaves out those it answers
// false for; they still count as read).
func (s *handlers) legacySender(w http.ResponseWriter, r *http.Request, list func(ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error),
	out func(json.RawMessage) ([]byte, bool, error)) error {
	return kit.ServePage(r, list, func(req ocpi.PageRequest, items []json.RawMessage, page ocpi.Page) error {
		converted := make([]json.RawMessage, 0, len(items))
		for _, it := range items {
			b, ok, err := out(it)
			if err != nil {
				return err
			}
			if ok {
				converted = append(converted, b)
			}
		}
		return s.legacyPage(w, r, req, converted, len(items), page)
	})
}

// legacyPage writes a page of converted objects with the paging headers and
// a whole-second timestamp. read is how many stored objects the page read
// (some may have been left out): the next page starts after them. The Link
// to the next page joins the deprecation links.
func (s *handlers) legacyPage(w http.ResponseWriter, r *http.Request, req ocpi.PageRequest, items []json.RawMessage, read int, page ocpi.Page) error {
	links := w.Header().Values("Link")
	w.Header().Del("Link")
	ocpi.SetPageHeaders(w.Header(), s.SelfURL(r), req, page, ocpi.MaxLimit, read)
	for _, l := range links {
		w.Header().Add("Link", l)
	}
	return s.legacyOK(w, items)
}
