package party_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// ctx returns a context bounded by the test.
func ctx(t *testing.T) context.Context { return hubtest.Ctx(t, 30*time.Second) }

// invite issues a token A.
func invite(t *testing.T, h *hubtest.Hub, name string, parties ...party.PartyRef) *party.Invitation {
	t.Helper()
	inv, err := h.Parties.Invite(ctx(t), name, 0, false, parties...)
	if err != nil {
		t.Fatalf("invite %s: %v", name, err)
	}
	return inv
}

// assertNothingRegistered requires an empty registry: no platform, no role.
func assertNothingRegistered(t *testing.T, h *hubtest.Hub) {
	t.Helper()
	if n := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM platforms"); n != 0 {
		t.Errorf("%d platforms stored, want none", n)
	}
	if n := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM platform_roles"); n != 0 {
		t.Errorf("%d platform roles stored, want none", n)
	}
}

// addAcme registers the tests' usual CPO, Acme (NL/ACM), and returns it
// with its platform.
func addAcme(t *testing.T, h *hubtest.Hub) (*sim.CPO, *party.Platform) {
	t.Helper()
	cpo := hubtest.Add(t, h, sim.StartCPO, "Acme", "NL", "ACM")
	return cpo, platformOf(t, h, "NL", "ACM")
}

// addVolt registers the tests' usual eMSP, Volt (DE/VMO).
func addVolt(t *testing.T, h *hubtest.Hub) *sim.EMSP {
	t.Helper()
	return hubtest.Add(t, h, sim.StartEMSP, "Volt", "DE", "VMO")
}

// platformOf returns the one platform hosting cc/pid.
func platformOf(t *testing.T, h *hubtest.Hub, cc, pid string) *party.Platform {
	t.Helper()
	p, err := h.Parties.FindByParty(ctx(t), "", cc, pid)
	if err != nil {
		t.Fatalf("platform of %s/%s: %v", cc, pid, err)
	}
	return p
}

// call sends a request to the hub with a token in the given encoding and
// returns the HTTP status and OCPI status_code.
func call(t *testing.T, h *hubtest.Hub, method, path, token string, b64 bool, body []byte) (httpStatus, statusCode int) {
	t.Helper()
	hdr := http.Header{}
	if token != "" {
		hdr.Set("Authorization", ocpi.EncodeToken(token, b64))
	}
	resp := h.Do(t, method, path, "", body, hdr)
	env, err := ocpi.DecodeEnvelope(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: not an envelope: %s", method, path, resp.Body)
	}
	return resp.HTTPStatus, env.StatusCode
}

// wantStatus requires an HTTP status and OCPI status_code.
func wantStatus(t *testing.T, what string, gotHTTP, gotCode, wantHTTP, wantCode int) {
	t.Helper()
	if gotHTTP != wantHTTP || gotCode != wantCode {
		t.Errorf("%s: HTTP %d status_code %d, want HTTP %d status_code %d", what, gotHTTP, gotCode, wantHTTP, wantCode)
	}
}

// authOf decodes the token of a recorded request's Authorization header in
// the encoding b64.
func authOf(r sim.Request, b64 bool) string {
	v, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Token ")
	if !b64 {
		return v
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// withFakeClock gives each hub its own fake clock (h.Clock.(*clock.Fake)).
func withFakeClock(o *hubtest.Options) {
	o.Clock = clock.NewFake(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
}
