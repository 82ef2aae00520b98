package party_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/party/clientinfo"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// waitPush waits until p has received a ClientInfo PUT for cc/pid with status.
func waitPush(t *testing.T, p *sim.Platform, cc, pid, status string) {
	waitPushes(t, p, 1, cc, pid, status)
}

// waitPushes waits until p has received n ClientInfo PUTs for cc/pid with
// status.
func waitPushes(t *testing.T, p *sim.Platform, n int, cc, pid, status string) {
	t.Helper()
	_, err := p.WaitFor(ctx(t), n, func(r sim.Request) bool {
		if r.Method != http.MethodPut || !strings.HasSuffix(r.Path, "/clientinfo/"+cc+"/"+pid) {
			return false
		}
		var ci sim.ClientInfo
		return json.Unmarshal(r.Body, &ci) == nil && ci.Status == status
	})
	if err != nil {
		t.Fatalf("%s/%s %s push: %v", cc, pid, status, err)
	}
}

// listClientInfo pages through the hub's hubclientinfo sender as p, limit
// objects a page, following Link headers.
func listClientInfo(t *testing.T, p *sim.Platform, query string) (all []sim.ClientInfo, pages int, total string) {
	t.Helper()
	u, ok := p.HubEndpoint("hubclientinfo", ocpi.InterfaceSender)
	if !ok {
		t.Fatal("the hub lists no hubclientinfo sender")
	}
	u += "?" + query
	for u != "" {
		resp, err := p.Raw(ctx(t), http.MethodGet, u, nil, nil)
		if err != nil || resp.HTTPStatus != http.StatusOK || resp.Envelope == nil || resp.Envelope.StatusCode != ocpi.StatusSuccess {
			t.Fatalf("GET %s: %v %+v", u, err, resp)
		}
		var items []sim.ClientInfo
		if err := json.Unmarshal(resp.Envelope.Data, &items); err != nil {
			t.Fatal(err)
		}
		all = append(all, items...)
		pages++
		total = resp.Header.Get("X-Total-Count")
		u = ocpi.NextLink(resp.Header)
	}
	return all, pages, total
}

// pushJobs counts the ClientInfo push jobs ever enqueued for a platform.
func pushJobs(t *testing.T, h *hubtest.Hub, platformID int64) int {
	t.Helper()
	list, err := h.Jobs.List(ctx(t), jobs.ListParams{Kinds: []string{clientinfo.PushArgs{}.Kind()}, Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range list {
		var a clientinfo.PushArgs
		if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
			t.Fatal(err)
		}
		if a.PlatformID == platformID {
			n++
		}
	}
	return n
}

func statusOf(list []sim.ClientInfo, role, cc, pid string) string {
	for _, ci := range list {
		if ci.Role == role && ci.CountryCode == cc && ci.PartyID == pid {
			return ci.Status
		}
	}
	return ""
}

// TestHubClientInfo: the hub announces parties to the platforms that have a
// hubclientinfo receiver whenever their status changes, and lists them all,
// paged, on its sender interface.
func TestHubClientInfo(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		emsp := addVolt(t, h)

		// An invitation bound to a party announces it as PLANNED.
		inv := invite(t, h, "acme", party.PartyRef{Role: party.RoleCPO, CountryCode: "NL", PartyID: "ACM"})
		waitPush(t, emsp.Platform, "NL", "ACM", clientinfo.Planned)
		ci, ok := emsp.ClientInfo("CPO", "NL", "ACM")
		if !ok || ci.Status != clientinfo.Planned || ci.LastUpdated.IsZero() {
			t.Errorf("the eMSP holds %+v", ci)
		}

		// It registers: CONNECTED. A second partner registering is pushed to
		// the first.
		cpo := hubtest.StartSim(t, sim.StartCPO, "Acme", "NL", "ACM")
		if err := cpo.Register(ctx(t), h.VersionsURL(), inv.Token); err != nil {
			t.Fatal(err)
		}
		waitPush(t, emsp.Platform, "NL", "ACM", party.ClientConnected)
		pl := platformOf(t, h, "NL", "ACM")

		// Suspension and resumption are announced.
		if err := h.Parties.Suspend(ctx(t), pl.ID); err != nil {
			t.Fatal(err)
		}
		waitPush(t, emsp.Platform, "NL", "ACM", clientinfo.Suspended)
		list, _, _ := listClientInfo(t, emsp.Platform, "")
		if got := statusOf(list, "CPO", "NL", "ACM"); got != clientinfo.Suspended {
			t.Errorf("listed as %q while suspended", got)
		}
		if err := h.Parties.Resume(ctx(t), pl.ID); err != nil {
			t.Fatal(err)
		}
		waitPushes(t, emsp.Platform, 2, "NL", "ACM", party.ClientConnected)

		// A party of the pusher itself is not pushed back to it.
		if got := cpo.Requests(sim.PathHas(http.MethodPut, "/clientinfo/NL/ACM")); len(got) != 0 {
			t.Errorf("the CPO received %d pushes about itself", len(got))
		}

		// The sender lists every party, paged: the hub's own eMSP, the two
		// partners and one more planned party.
		invite(t, h, "later", party.PartyRef{Role: party.RoleEMSP, CountryCode: "FR", PartyID: "LAT"})
		all, pages, total := listClientInfo(t, emsp.Platform, "limit=2")
		if len(all) != 4 || pages != 2 || total != "4" {
			t.Fatalf("listed %d parties on %d pages (X-Total-Count %s), want 4 on 2: %+v", len(all), pages, total, all)
		}
		for _, want := range []struct{ role, cc, pid, status string }{
			{"EMSP", "IN", "OHE", party.ClientConnected},
			{"EMSP", "DE", "VMO", party.ClientConnected},
			{"CPO", "NL", "ACM", party.ClientConnected},
			{"EMSP", "FR", "LAT", clientinfo.Planned},
		} {
			if got := statusOf(all, want.role, want.cc, want.pid); got != want.status {
				t.Errorf("%s %s/%s listed as %q, want %q", want.role, want.cc, want.pid, got, want.status)
			}
		}
		// date_from selects by last_updated.
		last := all[len(all)-1].LastUpdated
		recent, _, _ := listClientInfo(t, emsp.Platform, "date_from="+url.QueryEscape(last.String()))
		if len(recent) != 1 || recent[0].PartyID != "LAT" {
			t.Errorf("date_from=%s listed %+v", last, recent)
		}

		// Unregistering the CPO makes its party SUSPENDED for good.
		if err := cpo.Unregister(ctx(t)); err != nil {
			t.Fatal(err)
		}
		waitPushes(t, emsp.Platform, 2, "NL", "ACM", clientinfo.Suspended)
	})
}

// TestLiveness: platforms silent for more than five minutes get a GET of
// their versions; one that fails is OFFLINE (announced, not pushed to), and
// CONNECTED again when it answers.
func TestLiveness(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		clk := h.Clock.(*clock.Fake)
		emsp := addVolt(t, h)
		cpo, pl := addAcme(t, h)
		waitPush(t, emsp.Platform, "NL", "ACM", party.ClientConnected)
		var reconnected []int64
		h.Parties.ReconnectFuncs = append(h.Parties.ReconnectFuncs, func(_ context.Context, id int64) { reconnected = append(reconnected, id) })

		versionGETs := func(p *sim.Platform) int {
			return len(p.Requests(func(r sim.Request) bool { return r.Method == http.MethodGet && r.Path == "/ocpi/versions" }))
		}
		check := func() {
			t.Helper()
			if err := h.Parties.CheckLiveness(ctx(t)); err != nil {
				t.Fatal(err)
			}
		}

		// Heard from recently: nobody is checked.
		clk.Add(4 * time.Minute)
		emspGETs, cpoGETs := versionGETs(emsp.Platform), versionGETs(cpo.Platform)
		check()
		if versionGETs(emsp.Platform) != emspGETs || versionGETs(cpo.Platform) != cpoGETs {
			t.Fatal("liveness checked platforms heard from four minutes ago")
		}

		// Silent for six minutes: both are checked; the CPO is down.
		clk.Add(2 * time.Minute)
		cpo.SetDown(true)
		check()
		if versionGETs(emsp.Platform) != emspGETs+1 || versionGETs(cpo.Platform) != cpoGETs+1 {
			t.Errorf("liveness GETs: eMSP %d, CPO %d; want one each", versionGETs(emsp.Platform)-emspGETs, versionGETs(cpo.Platform)-cpoGETs)
		}
		if p, _ := h.Parties.Find(ctx(t), pl.ID); p.Connection != party.ClientOffline || p.LastError == "" || p.Status != party.StatusConnected {
			t.Errorf("CPO after a failed check: %+v", p)
		}
		if p := platformOf(t, h, "DE", "VMO"); p.Connection != party.ClientConnected {
			t.Errorf("eMSP after a good check: %+v", p)
		}
		waitPush(t, emsp.Platform, "NL", "ACM", party.ClientOffline)
		list, _, _ := listClientInfo(t, emsp.Platform, "")
		if got := statusOf(list, "CPO", "NL", "ACM"); got != party.ClientOffline {
			t.Errorf("listed as %q while down", got)
		}

		// OFFLINE: checked at every run, and sent nothing (do not send, do not
		// queue): a new planned party is pushed to the eMSP only.
		invite(t, h, "later", party.PartyRef{Role: party.RoleEMSP, CountryCode: "FR", PartyID: "LAT"})
		waitPush(t, emsp.Platform, "FR", "LAT", clientinfo.Planned)
		clk.Add(time.Minute)
		check()
		if versionGETs(cpo.Platform) != cpoGETs+2 {
			t.Errorf("an OFFLINE platform was not checked again")
		}
		if got := pushJobs(t, h, pl.ID); got != 0 {
			t.Errorf("%d pushes enqueued for an OFFLINE platform", got)
		}

		// Back: CONNECTED, announced, and the reconnect hooks run.
		cpo.SetDown(false)
		clk.Add(time.Minute)
		check()
		if p, _ := h.Parties.Find(ctx(t), pl.ID); p.Connection != party.ClientConnected || p.LastError != "" {
			t.Errorf("CPO after it answered again: %+v", p)
		}
		waitPushes(t, emsp.Platform, 2, "NL", "ACM", party.ClientConnected)
		if len(reconnected) != 1 || reconnected[0] != pl.ID {
			t.Errorf("reconnect hooks ran for %v, want [%d]", reconnected, pl.ID)
		}
	}, withFakeClock)
}
