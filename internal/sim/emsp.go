package sim

import (
	"io"
	"log/slog"
	"net/http"

	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// EMSP is a simulated e-mobility service provider. Its locations and
// tariffs RECEIVER interfaces apply what the hub pushes to an in-memory
// copy (tests assert the final state; the request log keeps the order).
type EMSP struct {
	*Platform
	locations *simwire.Directory
	tariffs   *simwire.Directory
	// st is the tokens, sessions, CDRs and commands side.
	st *emspState
}

// StartEMSP starts an eMSP simulator with the modules an eMSP offers.
func StartEMSP(name, cc, pid string, logger *slog.Logger, tweak ...func(*Options)) (*EMSP, error) {
	p, err := StartAs("EMSP", name, cc, pid, logger, tweak...)
	if err != nil {
		return nil, err
	}
	e := &EMSP{Platform: p, locations: simwire.NewDirectory(), tariffs: simwire.NewDirectory()}
	p.Handle("tokens", "SENDER", "/emsp/tokens", e.handleTokens)
	p.Handle("locations", "RECEIVER", "/emsp/locations", e.receiver(e.locations, "/emsp/locations"))
	p.Handle("tariffs", "RECEIVER", "/emsp/tariffs", e.receiver(e.tariffs, "/emsp/tariffs"))
	e.handleSessionModules()
	return e, nil
}

// handleTokens is the eMSP's tokens sender (list and real-time
// authorization).
func (e *EMSP) handleTokens(w http.ResponseWriter, r *http.Request) { e.serveTokens(w, r) }

// receiver applies PUT/PATCH/DELETE to d and serves GET from it; a PATCH or
// sub-object PUT of an unknown location answers 404 (the sender then PUTs
// the whole object).
func (e *EMSP) receiver(d *simwire.Directory, marker string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		seg := simwire.Segments(r.URL.Path, marker)
		if len(seg) < 3 {
			e.Reply(w, http.StatusNotFound, 2000, nil)
			return
		}
		if r.Method == http.MethodGet {
			if o := d.Get(seg[0], seg[1], seg[2]); o != nil {
				e.OK(w, o)
				return
			}
			e.Reply(w, http.StatusNotFound, 2003, nil)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if !d.Apply(r.Method, seg, body) {
			e.Reply(w, http.StatusNotFound, 2003, nil)
			return
		}
		e.OK(w, nil)
	}
}

// Location returns the eMSP's copy of a location (nil when it has none).
func (e *EMSP) Location(cc, pid, id string) map[string]any { return e.locations.Get(cc, pid, id) }

// Tariff returns the eMSP's copy of a tariff.
func (e *EMSP) Tariff(cc, pid, id string) map[string]any { return e.tariffs.Get(cc, pid, id) }

// EVSEStatus returns the status of an EVSE in the eMSP's copy ("" if none).
func (e *EMSP) EVSEStatus(cc, pid, locationID, evseUID string) string {
	loc := e.Location(cc, pid, locationID)
	if loc == nil {
		return ""
	}
	evses, _ := loc["evses"].([]any)
	if ev := simwire.FindObj(evses, "uid", evseUID); ev != nil {
		s, _ := ev["status"].(string)
		return s
	}
	return ""
}

// LocationCount returns how many locations the eMSP holds.
func (e *EMSP) LocationCount() int { return e.locations.Len() }
