package party_test

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// productionGuard is a hub configured as in production: no dev mode, no
// allow-list, so the outbound address guard refuses loopback.
func productionGuard(o *hubtest.Options) {
	o.Config = func(c *app.Config) { c.DevMode, c.OutboundAllow = false, nil }
}

// TestRegistrationToInternalAddressRefused: a partner whose versions URL
// points at the hub's own machine (127.0.0.1, localhost, ::1, the
// IPv4-mapped form) gets 3001 naming the refusal, the hub never connects
// there, nothing is registered and token A survives. A live service and a
// closed port read the same.
func TestRegistrationToInternalAddressRefused(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo := hubtest.StartSim(t, sim.StartCPO, "Inside CPO", "NL", "INS")
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(cpo.URL(), "http://"))
		closed, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, closedPort, _ := net.SplitHostPort(closed.Addr().String())
		closed.Close()

		// Through the simulator's own handshake: its versions URL is on
		// 127.0.0.1.
		inv := invite(t, h, cpo.Name())
		err = cpo.Register(ctx(t), h.VersionsURL(), inv.Token)
		if sim.StatusCode(err) != ocpi.StatusClientAPIError || sim.HTTPStatus(err) != http.StatusOK {
			t.Fatalf("register with a versions URL on 127.0.0.1: %v, want 3001 with HTTP 200", err)
		}
		var e *ocpiclient.Error
		if !errors.As(err, &e) || !strings.Contains(e.Response.Envelope.StatusMessage, "not one this hub may call") {
			t.Errorf("status_message does not name the refusal: %v", err)
		}
		assertNothingRegistered(t, h)

		// Every other spelling of the same machine, and a closed port.
		messages := map[string]bool{}
		for _, u := range []string{
			"http://localhost:" + port + "/ocpi/versions",
			"http://[::1]:" + port + "/ocpi/versions",
			"http://[::ffff:127.0.0.1]:" + port + "/ocpi/versions",
			"http://127.0.0.1:" + closedPort + "/ocpi/versions",
		} {
			resp, env, err := registerAt(t, h, cpo, inv.Token, u)
			if resp.HTTPStatus != http.StatusOK || err != nil || env.StatusCode != ocpi.StatusClientAPIError {
				t.Fatalf("register with %s: HTTP %d %s, want 3001", u, resp.HTTPStatus, resp.Body)
			}
			messages[strings.ReplaceAll(env.StatusMessage, u, "URL")] = true
			assertNothingRegistered(t, h)
		}
		if len(messages) != 1 {
			t.Errorf("the refusals read differently (a closed port tells itself apart?): %v", messages)
		}
		if got := cpo.Requests(func(r sim.Request) bool { return true }); len(got) != 0 {
			t.Errorf("the hub reached the partner's loopback address %d times: %+v", len(got), got)
		}
		if n := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM invitations WHERE id = $1 AND used_at IS NULL", inv.ID); n != 1 {
			t.Errorf("the refused attempts used token A")
		}
	}, productionGuard)
}

// TestCredentialsUpdateToInternalAddressRefused: a connected partner cannot
// move its versions URL to an internal address with a credentials PUT; the
// operator's allow-list opens exactly the address it names (here the
// partner's own port), nothing more.
func TestCredentialsUpdateToInternalAddressRefused(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		cpo := hubtest.StartSim(t, sim.StartCPO, "Allowed CPO", "NL", "ALW")
		inside := hubtest.StartSim(t, sim.StartCPO, "Internal service", "NL", "INT")
		h := hubtest.Start(t, engine, hubtest.AllowOnly(cpo.Platform))
		inv := invite(t, h, cpo.Name())
		if err := cpo.Register(ctx(t), h.VersionsURL(), inv.Token); err != nil {
			t.Fatalf("register the allowed partner: %v", err)
		}
		creds := cpo.Credentials("B-moved")
		creds.URL = inside.VersionsURL()
		_, err := cpo.CallHub(ctx(t), http.MethodPut, "credentials", "", "", creds, nil)
		var e *ocpiclient.Error
		if sim.StatusCode(err) != ocpi.StatusClientAPIError || !errors.As(err, &e) ||
			!strings.Contains(e.Response.Envelope.StatusMessage, "not one this hub may call") {
			t.Fatalf("credentials PUT moving to %s: %v, want 3001 naming the refusal", inside.VersionsURL(), err)
		}
		if got := inside.Requests(func(sim.Request) bool { return true }); len(got) != 0 {
			t.Errorf("the hub reached the internal service %d times", len(got))
		}
		if pl := platformOf(t, h, "NL", "ALW"); pl.VersionsURL != cpo.VersionsURL() {
			t.Errorf("versions URL now %s, want it unchanged (%s)", pl.VersionsURL, cpo.VersionsURL())
		}
	})
}

// TestRegistrationErrorsDoNotTellClosedFromLive: with the address allowed,
// a versions URL on a closed port, on a live service that is not OCPI, and
// on one answering an HTTP error without an OCPI body all read the same to
// the partner, so registration cannot be used as a port scanner. The
// operator's log has the detail.
func TestRegistrationErrorsDoNotTellClosedFromLive(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo := hubtest.StartSim(t, sim.StartCPO, "Probe CPO", "NL", "PRB")
		inv := invite(t, h, cpo.Name())
		closed, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closedURL := "http://" + closed.Addr().String() + "/ocpi/versions"
		closed.Close()
		live := func(fn http.HandlerFunc) string {
			srv := httptest.NewServer(fn)
			t.Cleanup(srv.Close)
			return srv.URL + "/ocpi/versions"
		}
		urls := []string{
			closedURL,
			live(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "<h1>admin</h1>", http.StatusNotFound) }),
			live(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "+OK redis") }),
			live(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) }),
		}
		messages := map[string][]string{}
		for _, u := range urls {
			resp, env, err := registerAt(t, h, cpo, inv.Token, u)
			if err != nil || env.StatusCode != ocpi.StatusClientAPIError {
				t.Fatalf("register with %s: HTTP %d %s, want 3001", u, resp.HTTPStatus, resp.Body)
			}
			m := strings.ReplaceAll(env.StatusMessage, u, "URL")
			messages[m] = append(messages[m], u)
		}
		if len(messages) != 1 {
			t.Errorf("partners can tell these apart: %v", messages)
		}
		assertNothingRegistered(t, h)
	})
}

// registerAt starts cpo's registration with token A and posts its
// credentials naming u as its versions URL; it returns the hub's answer
// and its decoded envelope.
func registerAt(t *testing.T, h *hubtest.Hub, cpo *sim.CPO, tokenA, u string) (*ocpiclient.Response, *ocpi.Envelope, error) {
	t.Helper()
	tokenB, err := cpo.Begin(ctx(t), h.VersionsURL(), tokenA)
	if err != nil {
		t.Fatal(err)
	}
	creds := cpo.Credentials(tokenB)
	creds.URL = u
	body, _ := json.Marshal(creds)
	resp := h.Do(t, http.MethodPost, "/ocpi/2.2.1/credentials", "", body, http.Header{"Authorization": {ocpi.EncodeToken(tokenA, true)}})
	env, err := ocpi.DecodeEnvelope(resp.Body)
	return resp, env, err
}
