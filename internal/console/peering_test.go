package console_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestPeerHubPage: the page of a peer hub shows the parties behind it and
// their reachability; the parties list marks them.
func TestPeerHubPage(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 60*time.Second)
		peer, id := h.AddPeer(t, "Peer Hub", "DE/PHB", "DE/AAA", "DE/BBB")
		// The eMSP behind it goes OFFLINE: no longer reachable.
		if resp, err := peer.PushClientInfo(ctx, sim.ClientInfo{CountryCode: "DE", PartyID: "BBB", Role: "EMSP", Status: "OFFLINE",
			LastUpdated: ocpi.NewDateTime(time.Now().Add(time.Minute))}); err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("ClientInfo push: %v %+v", err, resp)
		}
		c := signedIn(t, h)
		p := c.get("/console/parties/" + itoa(id))
		if p.status != http.StatusOK || !strings.Contains(p.body, "Behind this hub") || !strings.Contains(p.body, "DE/AAA") || !strings.Contains(p.body, "DE/BBB") {
			t.Fatalf("peer hub page: HTTP %d\n%s", p.status, p.body)
		}
		row := p.body[strings.Index(p.body, `id="peer-parties"`):]
		aaa, bbb := row[strings.Index(row, "DE/AAA"):], row[strings.Index(row, "DE/BBB"):]
		if !strings.Contains(aaa[:strings.Index(aaa, "</tr>")], "yes") || !strings.Contains(bbb[:strings.Index(bbb, "</tr>")], "OFFLINE") ||
			strings.Contains(bbb[:strings.Index(bbb, "</tr>")], "yes") {
			t.Errorf("reachability on the peer hub page:\n%s", row)
		}
		if list := c.get("/console/parties"); !strings.Contains(list.body, `title="behind this hub">CPO DE/AAA`) {
			t.Errorf("parties list does not mark DE/AAA as behind the hub")
		}
	})
}

// TestPeerHubConflictPage: two peer hubs list the same party; both pages
// show the conflict: the first hub keeps the party (also listed by the
// other), the second does not reach it (another hub listed it first).
func TestPeerHubConflictPage(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		_, one := h.AddPeer(t, "Peer One", "DE/PH1", "DE/AAA", "DE/BB1")
		_, two := h.AddPeer(t, "Peer Two", "DE/PH2", "DE/AAA", "DE/BB2")
		ids := []int64{one, two}
		c := signedIn(t, h)
		row := func(id int64) string {
			t.Helper()
			p := c.get("/console/parties/" + itoa(id))
			i := strings.Index(p.body, `id="peer-parties"`)
			if p.status != http.StatusOK || i < 0 {
				t.Fatalf("peer hub page: HTTP %d\n%s", p.status, p.body)
			}
			rest := p.body[i:]
			j := strings.Index(rest, "DE/AAA")
			if j < 0 {
				t.Fatalf("DE/AAA not on the page of #%d", id)
			}
			rest = rest[j:]
			return rest[:strings.Index(rest, "</tr>")]
		}
		if first := row(ids[0]); !strings.Contains(first, "yes") || !strings.Contains(first, "conflict") || !strings.Contains(first, "#"+itoa(ids[1])) {
			t.Errorf("the first peer hub's row of DE/AAA: %s", first)
		}
		if second := row(ids[1]); !strings.Contains(second, "conflict") || !strings.Contains(second, "another peer hub listed it first") || strings.Contains(second, "yes") {
			t.Errorf("the second peer hub's row of DE/AAA: %s", second)
		}
	})
}
