package party_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestTokenEncodings: partners that send raw tokens and partners that send
// Base64 register in both directions, and the hub calls each one in its own
// encoding from then on.
func TestTokenEncodings(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		// A watcher receives ClientInfo pushes: hub → partner calls after
		// registration.
		for i, raw := range []bool{false, true} {
			enc := func(o *sim.Options) { o.RawTokens = raw }
			b64 := !raw

			// Partner-initiated: the hub answers in the partner's encoding
			// at once (no failed attempt in the other one).
			emsp := hubtest.Add(t, h, sim.StartEMSP, fmt.Sprintf("eMSP raw=%v", raw), "DE", fmt.Sprintf("E%02d", i), enc)
			ecc, epid := emsp.Party()
			pl := platformOf(t, h, ecc, epid)
			if pl.TokenBase64 != b64 {
				t.Errorf("raw=%v: partner-initiated platform token_base64 = %v", raw, pl.TokenBase64)
			}
			fromHub := emsp.Requests(func(r sim.Request) bool { return strings.HasPrefix(r.Path, "/ocpi/") })
			if len(fromHub) != 2 {
				t.Errorf("raw=%v: the hub made %d calls to register the eMSP, want 2 (versions, details)", raw, len(fromHub))
			}
			for _, r := range fromHub {
				if authOf(r, b64) != emsp.TokenIn() {
					t.Errorf("raw=%v: hub called %s with %q", raw, r.Path, r.Header.Get("Authorization"))
				}
			}

			// Hub-initiated: Base64 is tried first, then the partner's
			// encoding is kept for the POST and everything after.
			cpo := hubtest.StartSim(t, sim.StartCPO, fmt.Sprintf("CPO raw=%v", raw), "NL", fmt.Sprintf("C%02d", i), enc)
			tokenA := cpo.Invite()
			cp, err := h.Parties.Connect(ctx(t), "", cpo.VersionsURL(), tokenA)
			if err != nil {
				t.Fatalf("raw=%v: connect: %v", raw, err)
			}
			if cp.TokenBase64 != b64 {
				t.Errorf("raw=%v: hub-initiated platform token_base64 = %v", raw, cp.TokenBase64)
			}
			posts := cpo.Requests(sim.PathHas(http.MethodPost, "/credentials"))
			if len(posts) != 1 || authOf(posts[0], b64) != tokenA {
				t.Errorf("raw=%v: credentials POST not in the partner's encoding", raw)
			}

			// Later calls: the eMSP receives the ClientInfo of the new CPO in
			// its encoding; the CPO calls the hub in its own.
			cc, pid := cpo.Party()
			// Wait for the push to be handled, not only received.
			if err := emsp.Until(ctx(t), func() bool { _, ok := emsp.ClientInfo(string(party.RoleCPO), cc, pid); return ok }); err != nil {
				t.Fatalf("raw=%v: %v", raw, err)
			}
			got := emsp.Requests(sim.PathHas(http.MethodPut, "/clientinfo/"+cc+"/"+pid))
			if authOf(got[0], b64) != emsp.TokenIn() {
				t.Errorf("raw=%v: ClientInfo push with %q", raw, got[0].Header.Get("Authorization"))
			}
			if _, ok := emsp.ClientInfo(string(party.RoleCPO), cc, pid); !ok {
				t.Errorf("raw=%v: the eMSP refused the push", raw)
			}
			if _, err := cpo.CallHub(ctx(t), http.MethodGet, "hubclientinfo", "", "", nil, nil); err != nil {
				t.Errorf("raw=%v: the CPO calls the hub: %v", raw, err)
			}
		}
	})
}
