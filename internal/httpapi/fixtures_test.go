package httpapi_test

import (
	"log/slog"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/ptpsim"
)

// The partners the package's tests start: a simulated CPO, eMSP or PTP,
// closed when the test ends, and (registered…) registered with the hub.

func newCPO(t testing.TB, name, cc, pid string) *sim.CPO {
	return started(t, sim.StartCPO, name, cc, pid)
}

func newEMSP(t testing.TB, name, cc, pid string) *sim.EMSP {
	return started(t, sim.StartEMSP, name, cc, pid)
}

func registeredCPO(t testing.TB, h *hubtest.Hub, name, cc, pid string) *sim.CPO {
	p := newCPO(t, name, cc, pid)
	h.Register(t, p.Platform)
	return p
}

func registeredEMSP(t testing.TB, h *hubtest.Hub, name, cc, pid string) *sim.EMSP {
	p := newEMSP(t, name, cc, pid)
	h.Register(t, p.Platform)
	return p
}

func registeredPTP(t testing.TB, h *hubtest.Hub, name, cc, pid string) *ptpsim.PTP {
	p := started(t, ptpsim.Start, name, cc, pid)
	h.Register(t, p.Platform)
	return p
}

// started starts a simulated partner with the tests' logger and closes it
// when the test ends.
func started[P interface{ Close() }](t testing.TB, start func(name, cc, pid string, logger *slog.Logger, tweak ...func(*sim.Options)) (P, error), name, cc, pid string) P {
	t.Helper()
	p, err := start(name, cc, pid, hubtest.Logger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}
