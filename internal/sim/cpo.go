package sim

import (
	"log/slog"
	"net/http"
)

// CPO is a simulated Charge Point Operator.
type CPO struct {
	*Platform
}

// StartCPO starts a CPO simulator with the modules a CPO offers.
func StartCPO(name, cc, pid string, logger *slog.Logger, tweak ...func(*Options)) (*CPO, error) {
	opts := Options{Name: name, Role: "CPO", CountryCode: cc, PartyID: pid, Logger: logger}
	for _, t := range tweak {
		t(&opts)
	}
	p, err := Start(opts)
	if err != nil {
		return nil, err
	}
	c := &CPO{Platform: p}
	p.Handle("locations", "SENDER", "/cpo/locations", c.handleLocations)
	return c, nil
}

// handleLocations is the CPO's locations sender (pull is mandatory for the
// data owner); the directory grows in the locations module.
func (c *CPO) handleLocations(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Total-Count", "0")
	w.Header().Set("X-Limit", "100")
	c.OK(w, []any{})
}
