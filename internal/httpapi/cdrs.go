package httpapi

import (
	"net/http"
	"net/url"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// cdrURL is the hub's URL of a stored CDR (the Location of a POST).
func (s *Server) cdrURL(ref cdr.Ref) string {
	return s.kit.PublicURL("/ocpi/2.2.1/cpo/cdrs/" + url.PathEscape(ref.CountryCode) + "/" + url.PathEscape(ref.PartyID) + "/" + url.PathEscape(ref.ID))
}

// handleCPOCDRPost serves POST /ocpi/2.2.1/cpo/cdrs: 201 with the stored
// CDR's URL in Location; a repeat of the same CDR 200 with the same
// Location.
func (s *Server) handleCPOCDRPost(w http.ResponseWriter, r *http.Request) error {
	if _, err := callerParty(r, party.RoleCPO); err != nil {
		return err
	}
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	res, err := s.cfg.CDRs.Create(r.Context(), cdr.Change{CPOs: callerParties(r, party.RoleCPO), CorrelationID: CorrelationID(r.Context()), Sender: senderOf(r)}, raw)
	if err != nil {
		return err
	}
	w.Header().Set("Location", s.cdrURL(res.Ref))
	s.setHubRouting(w, r)
	return s.kit.Stored(w, res.Created)
}

// handleCPOCDRGet serves GET /ocpi/2.2.1/cpo/cdrs/{cc}/{pid}/{id}: the URL
// a POST answered with.
func (s *Server) handleCPOCDRGet(w http.ResponseWriter, r *http.Request) error {
	ref := cdr.Ref{CountryCode: r.PathValue("cc"), PartyID: r.PathValue("pid"), ID: r.PathValue("id")}
	if err := ownsParty(r, party.RoleCPO, ref.CountryCode, ref.PartyID); err != nil {
		return err
	}
	c, err := s.cfg.CDRs.Find(r.Context(), ref)
	if err != nil {
		return err
	}
	s.setHubRouting(w, r)
	return s.kit.OK(w, c.Body)
}

// handleEMSPCDRs serves GET /ocpi/2.2.1/emsp/cdrs: an eMSP pulls the CDRs
// of its own tokens.
func (s *Server) handleEMSPCDRs(w http.ResponseWriter, r *http.Request) error {
	if _, err := callerParty(r, party.RoleEMSP); err != nil {
		return err
	}
	req, err := ocpi.ParsePageRequest(r.URL.Query(), ocpi.MaxLimit)
	if err != nil {
		return err
	}
	f := cdr.Filter{Owners: owners(r)}
	if to, ok := s.addressedElsewhere(r); ok {
		f.CPO = to
	}
	items, page, err := s.cfg.CDRs.List(r.Context(), f, req)
	if err != nil {
		return err
	}
	s.setHubRouting(w, r)
	return s.kit.Page(w, r, req, items, len(items), page)
}
