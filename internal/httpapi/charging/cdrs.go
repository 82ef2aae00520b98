package charging

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
)

// cdrURL is the hub's URL of a stored CDR (the Location of a POST).
func (s *handlers) cdrURL(ref cdr.Ref) string {
	return s.PublicURL("/ocpi/2.2.1/cpo/cdrs/" + url.PathEscape(ref.CountryCode) + "/" + url.PathEscape(ref.PartyID) + "/" + url.PathEscape(ref.ID))
}

// handleCPOCDRPost serves POST /ocpi/2.2.1/cpo/cdrs: 201 with the stored
// CDR's URL in Location; a repeat of the same CDR 200 with the same
// Location.
func (s *handlers) handleCPOCDRPost(w http.ResponseWriter, r *http.Request) error {
	_, raw, err := kit.CallerAndBody(r, party.RoleCPO)
	if err != nil {
		return err
	}
	res, err := s.cfg.CDRs.Create(r.Context(), cdr.Change{CPOs: kit.CallerParties(r, party.RoleCPO), CorrelationID: kit.CorrelationID(r.Context()), Sender: kit.SenderOf(r)}, raw)
	if err != nil {
		return err
	}
	w.Header().Set("Location", s.cdrURL(res.Ref))
	s.SetHubRouting(w, r)
	return s.Stored(w, res.Created)
}

// handleCPOCDRGet serves GET /ocpi/2.2.1/cpo/cdrs/{cc}/{pid}/{id}: the URL
// a POST answered with.
func (s *handlers) handleCPOCDRGet(w http.ResponseWriter, r *http.Request) error {
	ref := cdr.Ref{CountryCode: r.PathValue("cc"), PartyID: r.PathValue("pid"), ID: r.PathValue("id")}
	if err := kit.OwnsParty(r, party.RoleCPO, ref.CountryCode, ref.PartyID); err != nil {
		return err
	}
	c, err := s.cfg.CDRs.Find(r.Context(), ref)
	if err != nil {
		return err
	}
	s.SetHubRouting(w, r)
	return s.OK(w, c.Body)
}

// handleEMSPCDRs serves GET /ocpi/2.2.1/emsp/cdrs: an eMSP pulls the CDRs
// of its own tokens.
func (s *handlers) handleEMSPCDRs(w http.ResponseWriter, r *http.Request) error {
	return s.ownTokensPage(w, r, func(owners []ocpiclient.Party, cpo ocpiclient.Party, req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
		return s.cfg.CDRs.List(r.Context(), cdr.Filter{Owners: owners, CPO: cpo}, req)
	})
}
