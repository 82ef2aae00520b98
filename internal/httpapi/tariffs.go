package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/tariff"
)

// cpoTariffRef reads {cc}/{pid}/{tariff_id} (or the short form with the
// caller's only CPO party) and checks the owner is the caller's.
func cpoTariffRef(r *http.Request) (tariff.Ref, error) {
	ref := tariff.Ref{CountryCode: r.PathValue("cc"), PartyID: r.PathValue("pid"), ID: r.PathValue("tariff_id")}
	c := ocpi.NewCheck("")
	if ref.CountryCode != "" || ref.PartyID != "" {
		c.CountryCode("country_code", ref.CountryCode, true)
		c.PartyID("party_id", ref.PartyID, true)
	}
	c.CiString("tariff_id", ref.ID, 36, true)
	if err := c.Err(); err != nil {
		return ref, err
	}
	return ref, ownCPO(r, &ref.CountryCode, &ref.PartyID)
}

func tariffSuffix(ref tariff.Ref) string {
	return hub.PathOf(ocpi.Key(ref.CountryCode), ocpi.Key(ref.PartyID), ref.ID)
}

// handleCPOTariffGet serves GET on the tariffs receiver.
func (s *Server) handleCPOTariffGet(w http.ResponseWriter, r *http.Request) error {
	ref, err := cpoTariffRef(r)
	if err != nil {
		return err
	}
	return s.receiverGet(w, r, tariff.Module, tariffSuffix(ref), func() (json.RawMessage, error) {
		return s.cfg.Tariffs.Get(r.Context(), ref)
	})
}

// handleCPOTariffPut serves PUT of a Tariff.
func (s *Server) handleCPOTariffPut(w http.ResponseWriter, r *http.Request) error {
	ref, err := cpoTariffRef(r)
	if err != nil {
		return err
	}
	return s.receiverWrite(w, r, tariff.Module, tariffSuffix(ref), func(platformID int64, raw []byte) (bool, error) {
		created, _, err := s.cfg.Tariffs.Put(r.Context(), tariff.Change{PlatformID: platformID, CorrelationID: CorrelationID(r.Context())}, ref, raw)
		return created, err
	})
}

// handleCPOTariffDelete serves DELETE of a Tariff. A tariff connectors still
// list is deleted too (the spec only recommends re-pointing them first); the
// answer's status_message names them so the CPO can fix its connectors.
func (s *Server) handleCPOTariffDelete(w http.ResponseWriter, r *http.Request) error {
	ref, err := cpoTariffRef(r)
	if err != nil {
		return err
	}
	if to, ok := s.kit.AddressedElsewhere(r); ok {
		return s.kit.Forward(w, r, to, tariff.Module, ocpi.InterfaceReceiver, tariffSuffix(ref), nil)
	}
	c := party.CallerFrom(r.Context())
	dangling, err := s.cfg.Tariffs.Delete(r.Context(), tariff.Change{PlatformID: c.PlatformID, CorrelationID: CorrelationID(r.Context())}, ref)
	if err != nil {
		return err
	}
	s.kit.SetHubRouting(w, r)
	resp := ocpi.Success(nil, s.clock.Now())
	if len(dangling) > 0 {
		resp.StatusMessage = "Success; connectors still listing the tariff: " + strings.Join(dangling, ", ")
	}
	kit.WriteJSON(w, http.StatusOK, resp)
	return nil
}

// handleCPOTariffPatch explains that 2.2.1 tariffs have no PATCH.
func (s *Server) handleCPOTariffPatch(w http.ResponseWriter, r *http.Request) error {
	if _, err := cpoTariffRef(r); err != nil {
		return err
	}
	w.Header().Set("Allow", "GET, PUT, DELETE")
	return &ocpi.Error{Code: ocpi.EMETHOD, Message: "OCPI 2.2.1 tariffs have no PATCH (it was removed after 2.1.1): PUT the whole tariff"}
}

// handleEMSPTariffs is the tariffs SENDER for eMSPs: the tariffs of every
// CPO (or of the one OCPI-to-* names), paged.
func (s *Server) handleEMSPTariffs(w http.ResponseWriter, r *http.Request) error {
	return s.kit.DirectoryPage(w, r, func(req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
		cc, pid := s.directoryFilter(r)
		return s.cfg.Tariffs.List(r.Context(), tariff.Filter{CountryCode: cc, PartyID: pid}, req)
	})
}

// handleEMSPTariff serves one tariff of the directory; like locations, the id
// alone must be unique across CPOs unless OCPI-to-* names the CPO.
func (s *Server) handleEMSPTariff(w http.ResponseWriter, r *http.Request) error {
	ref := tariff.Ref{ID: r.PathValue("tariff_id")}
	c := ocpi.NewCheck("")
	c.CiString("tariff_id", ref.ID, 36, true)
	if err := c.Err(); err != nil {
		return err
	}
	var err error
	if ref.CountryCode, ref.PartyID, err = s.directoryOwner(r, ref.ID, s.cfg.Tariffs.Lookup); err != nil {
		return err
	}
	body, err := s.cfg.Tariffs.Get(r.Context(), ref)
	if err != nil {
		return err
	}
	s.kit.SetHubRouting(w, r)
	return s.kit.OK(w, json.RawMessage(body))
}
