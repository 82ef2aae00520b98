package hubtest

import (
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// Cast is the set of partners most tests of a hub need, registered in this
// order: CPO One (CPO's country/CP1), CPO Two (IN/CP2, only in Cast), eMSP One
// (DE/EM1) and eMSP Two (FR/EM2). Packages embed it in their own bundle of
// fixtures, so every package starts the same partners the same way.
type Cast struct {
	CPO   *sim.CPO
	CPO2  *sim.CPO // nil in a Trio
	EMSP  *sim.EMSP
	EMSP2 *sim.EMSP
}

// Cast registers two CPOs (IN/CP1, IN/CP2) and two eMSPs (DE/EM1, FR/EM2).
func (h *Hub) Cast(t testing.TB) Cast {
	t.Helper()
	return Cast{
		CPO:   h.AddCPO(t, "CPO One", "IN", "CP1"),
		CPO2:  h.AddCPO(t, "CPO Two", "IN", "CP2"),
		EMSP:  h.AddEMSP(t, "eMSP One", "DE", "EM1"),
		EMSP2: h.AddEMSP(t, "eMSP Two", "FR", "EM2"),
	}
}

// Trio registers one CPO (cpoCountry/CP1) and two eMSPs (DE/EM1, FR/EM2).
func (h *Hub) Trio(t testing.TB, cpoCountry string) Cast {
	t.Helper()
	return Cast{
		CPO:   h.AddCPO(t, "CPO One", cpoCountry, "CP1"),
		EMSP:  h.AddEMSP(t, "eMSP One", "DE", "EM1"),
		EMSP2: h.AddEMSP(t, "eMSP Two", "FR", "EM2"),
	}
}

// StartCPO starts a simulated CPO that is closed when the test ends; it is
// not registered with any hub.
func StartCPO(t testing.TB, name, cc, pid string, tweak ...func(*sim.Options)) *sim.CPO {
	t.Helper()
	p, err := sim.StartCPO(name, cc, pid, Logger(), tweak...)
	return started(t, name, p, err)
}

// StartEMSP is StartCPO for an eMSP.
func StartEMSP(t testing.TB, name, cc, pid string, tweak ...func(*sim.Options)) *sim.EMSP {
	t.Helper()
	p, err := sim.StartEMSP(name, cc, pid, Logger(), tweak...)
	return started(t, name, p, err)
}

// StartPTP is StartCPO for a payment terminal provider.
func StartPTP(t testing.TB, name, cc, pid string, tweak ...func(*sim.Options)) *sim.PTP {
	t.Helper()
	p, err := sim.StartPTP(name, cc, pid, Logger(), tweak...)
	return started(t, name, p, err)
}

// started fails the test when a simulator did not start, and closes it
// when the test ends.
func started[P interface{ Close() }](t testing.TB, name string, p P, err error) P {
	t.Helper()
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(p.Close)
	return p
}

// AddCPO starts a simulated CPO (closed when the test ends) and registers it.
func (h *Hub) AddCPO(t testing.TB, name, cc, pid string, tweak ...func(*sim.Options)) *sim.CPO {
	t.Helper()
	p := StartCPO(t, name, cc, pid, tweak...)
	h.Register(t, p.Platform)
	return p
}

// AddEMSP is AddCPO for an eMSP.
func (h *Hub) AddEMSP(t testing.TB, name, cc, pid string, tweak ...func(*sim.Options)) *sim.EMSP {
	t.Helper()
	p := StartEMSP(t, name, cc, pid, tweak...)
	h.Register(t, p.Platform)
	return p
}

// AddPTP is AddCPO for a payment terminal provider.
func (h *Hub) AddPTP(t testing.TB, name, cc, pid string, tweak ...func(*sim.Options)) *sim.PTP {
	t.Helper()
	p := StartPTP(t, name, cc, pid, tweak...)
	h.Register(t, p.Platform)
	return p
}

// FastPush is the configuration most module tests start from: the outbox
// retries after 20 ms, and no periodic sync runs behind the test's back.
func FastPush(c *app.Config) {
	c.PushBackoff = 20 * time.Millisecond
	c.SyncInterval = 0
}

// Configure returns an option that edits the configuration with FastPush
// and then edit (nil: FastPush alone), recording events when record is set.
func Configure(record bool, edit func(*app.Config)) func(*Options) {
	return func(o *Options) {
		if record {
			o.Events = NewRecorder()
		}
		o.Config = func(c *app.Config) {
			FastPush(c)
			if edit != nil {
				edit(c)
			}
		}
	}
}
