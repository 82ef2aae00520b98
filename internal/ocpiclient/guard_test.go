package ocpiclient_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"

	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
)

// TestGuardedClient: the hub's client refuses internal addresses at once,
// without retrying and without connecting; an allowed partner that
// redirects to an internal address is refused on that hop.
func TestGuardedClient(t *testing.T) {
	t.Parallel()
	b := setup(t)
	internal := b.serve(t, envelope(1000, []any{}))

	guarded := func(g *netguard.Guard) *ocpiclient.Client {
		c := ocpiclient.NewGuarded(nil, g)
		c.SleepFunc = b.client.SleepFunc
		return c
	}
	resp, err := guarded(nil).Do(context.Background(), ocpiclient.Request{Method: http.MethodGet, URL: internal.URL + "/ocpi/versions"})
	if !netguard.IsRefused(err) || ocpiclient.KindOf(err) != ocpiclient.KindUnreachable {
		t.Fatalf("call to %s: %v, want refused (KindUnreachable)", internal.URL, err)
	}
	if resp != nil || len(b.sleeps) != 0 || len(b.reqs) != 0 {
		t.Errorf("refused call: response %v, %d retries, %d requests reached the server; want none", resp, len(b.sleeps), len(b.reqs))
	}

	// The operator allows one partner's port; it redirects to the internal
	// server.
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal.URL+"/ocpi/versions", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(partner.Close)
	_, portText, _ := net.SplitHostPort(partner.Listener.Addr().String())
	port, _ := strconv.ParseUint(portText, 10, 16)
	g := netguard.New(netguard.Rule{Prefix: netip.MustParsePrefix("127.0.0.1/32"), Port: uint16(port)})
	if _, err := guarded(g).Versions(context.Background(), partner.URL+"/ocpi/versions", ocpiclient.Auth{Token: "t"}); !netguard.IsRefused(err) {
		t.Errorf("redirect to an internal address: %v, want refused", err)
	}
	if len(b.reqs) != 0 {
		t.Errorf("%d requests reached the internal server through the redirect", len(b.reqs))
	}

	// With loopback allowed the same call works.
	if _, err := guarded(netguard.New(netguard.Loopback...)).Versions(context.Background(), internal.URL, ocpiclient.Auth{Token: "t"}); err != nil {
		t.Errorf("loopback allowed: %v", err)
	}
}
