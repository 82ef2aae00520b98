package sim

import (
	"log/slog"
	"net/http"
)

// EMSP is a simulated e-mobility service provider.
type EMSP struct {
	*Platform
}

// StartEMSP starts an eMSP simulator with the modules an eMSP offers.
func StartEMSP(name, cc, pid string, logger *slog.Logger, tweak ...func(*Options)) (*EMSP, error) {
	opts := Options{Name: name, Role: "EMSP", CountryCode: cc, PartyID: pid, Logger: logger}
	for _, t := range tweak {
		t(&opts)
	}
	p, err := Start(opts)
	if err != nil {
		return nil, err
	}
	e := &EMSP{Platform: p}
	p.Handle("tokens", "SENDER", "/emsp/tokens", e.handleTokens)
	return e, nil
}

// handleTokens is the eMSP's tokens sender.
func (e *EMSP) handleTokens(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Total-Count", "0")
	w.Header().Set("X-Limit", "100")
	e.OK(w, []any{})
}
