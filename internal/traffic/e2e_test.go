package traffic_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ocpihub/ocpihub/internal/browsertest"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/traffic"
)

// chainBundle is a hub with a CPO (NL/CP1) and two eMSPs registered
// (hubtest.Trio).
type chainBundle struct {
	h *hubtest.Hub
	hubtest.Cast
	ctx context.Context
}

func setupChain(t *testing.T, h *hubtest.Hub) *chainBundle {
	t.Helper()
	return &chainBundle{h: h, Cast: h.Trio(t, "NL"), ctx: hubtest.Ctx(t, 60*time.Second)}
}

// envelope decodes an OCPI answer's data.
func envelope[T any](t *testing.T, body []byte) T {
	t.Helper()
	var env struct {
		StatusCode int `json:"status_code"`
		Data       T   `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.StatusCode != 1000 {
		t.Fatalf("answer: %s", body)
	}
	return env.Data
}

// TestChainByCorrelationID is the inspector's end-to-end story: a CPO's
// EVSE PATCH with a chosen X-Correlation-ID is found by one admin search
// together with the hub's pushes to every eMSP and their answers; each
// partner reading its own traffic sees only its own hop.
func TestChainByCorrelationID(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		b := setupChain(t, h)
		if resp, err := b.CPO.Push(b.ctx, "locations", http.MethodPut, hubtest.Location("NL", "CP1", "LOC1", "AVAILABLE", hubtest.Stamp(0)), nil, "LOC1"); err != nil || resp.HTTPStatus != http.StatusCreated {
			t.Fatalf("PUT location: %v %v", resp, err)
		}
		for _, e := range []*sim.EMSP{b.EMSP, b.EMSP2} {
			if err := e.Until(b.ctx, func() bool { return e.EVSEStatus("NL", "CP1", "LOC1", "E1") == "AVAILABLE" }); err != nil {
				t.Fatal(err)
			}
		}

		cid := "chain-" + string(h.Engine) + "-7f3a"
		base, _ := b.CPO.HubEndpoint("locations", "RECEIVER")
		hdr := http.Header{}
		hdr.Set("X-Correlation-ID", cid)
		resp, err := b.CPO.Raw(b.ctx, http.MethodPatch, base+"/NL/CP1/LOC1/E1", map[string]any{"status": "CHARGING", "last_updated": hubtest.Stamp(1)}, hdr)
		if err != nil || resp.HTTPStatus != http.StatusOK {
			t.Fatalf("PATCH: %v %v", resp, err)
		}
		if got := resp.Header.Get("X-Correlation-ID"); got != cid {
			t.Fatalf("answer's X-Correlation-ID = %q", got)
		}
		for _, e := range []*sim.EMSP{b.EMSP, b.EMSP2} {
			if err := e.Until(b.ctx, func() bool { return e.EVSEStatus("NL", "CP1", "LOC1", "E1") == "CHARGING" }); err != nil {
				t.Fatal(err)
			}
			// The push carried the chain's id to the eMSP.
			patches := e.Requests(sim.PathHas(http.MethodPatch, "/locations/NL/CP1/LOC1/E1"))
			if len(patches) != 1 || patches[0].Header.Get("X-Correlation-ID") != cid {
				t.Fatalf("%s got %d PATCHes, X-Correlation-ID %v", e.Name(), len(patches), patches)
			}
			// And the chain's W3C trace.
			if tp := patches[0].Header.Get("traceparent"); ocpiclient.ParseTraceParent(tp) != ocpiclient.TraceIDFor(cid) {
				t.Errorf("%s got traceparent %q, want trace %s", e.Name(), tp, ocpiclient.TraceIDFor(cid))
			}
		}

		// One GET finds the whole chain: the CPO's PATCH and a push to each
		// eMSP with its answer.
		var chain []traffic.Exchange
		hubtest.Eventually(t, b.ctx, "the chain recorded", func() bool {
			r := h.Do(t, http.MethodGet, "/admin/traffic?order=oldest&correlation_id="+url.QueryEscape(cid), hubtest.AdminToken, nil, nil)
			chain = envelope[[]traffic.Exchange](t, r.Body)
			return len(chain) >= 3
		})
		if len(chain) != 3 {
			t.Fatalf("chain has %d exchanges: %+v", len(chain), chain)
		}
		in := chain[0]
		if in.Direction != traffic.In || in.Method != http.MethodPatch || in.Partner != "CPO One" || in.Module != "locations" ||
			in.HTTPStatus != 200 || in.StatusCode != 1000 || in.DurationUS <= 0 {
			t.Errorf("inbound hop: %+v", in)
		}
		seen := map[string]traffic.Exchange{}
		for _, x := range chain[1:] {
			if x.Direction != traffic.Out || x.Method != http.MethodPatch || x.HTTPStatus != 200 || x.StatusCode != 1000 || x.Module != "locations" {
				t.Errorf("push hop: %+v", x)
			}
			seen[x.Partner] = x
		}
		if len(seen) != 2 || seen["eMSP One"].ToParty != "DE/EM1" || seen["eMSP Two"].ToParty != "FR/EM2" {
			t.Errorf("pushes went to %v", seen)
		}
		// The whole exchange: the push's answer, and no token.
		r := h.Do(t, http.MethodGet, "/admin/traffic/"+strconv.FormatInt(seen["eMSP One"].ID, 10), hubtest.AdminToken, nil, nil)
		whole := envelope[traffic.Exchange](t, r.Body)
		var sent struct {
			Status string `json:"status"`
		}
		if whole.ResponseBody == "" || whole.RequestHeader.Get("Authorization") != traffic.Redacted ||
			json.Unmarshal([]byte(whole.RequestBody), &sent) != nil || sent.Status != "CHARGING" || !strings.Contains(whole.ResponseBody, `"status_code":1000`) {
			t.Errorf("whole exchange: %+v", whole)
		}

		// By object id too.
		r = h.Do(t, http.MethodGet, "/admin/traffic?object_id=E1&module=locations&direction=out&status=2xx", hubtest.AdminToken, nil, nil)
		if n := len(envelope[[]traffic.Exchange](t, r.Body)); n < 2 {
			t.Errorf("object search found %d", n)
		}

		// Each partner sees its own hop, never another's.
		for _, tc := range []struct {
			p    *sim.Platform
			want traffic.Direction
		}{{b.CPO.Platform, traffic.In}, {b.EMSP.Platform, traffic.Out}, {b.EMSP2.Platform, traffic.Out}} {
			r, err := tc.p.Raw(b.ctx, http.MethodGet, h.PublicURL()+"/ocpi/2.2.1/traffic?correlation_id="+url.QueryEscape(cid), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			own := envelope[[]traffic.Exchange](t, r.Body)
			if len(own) != 1 || own[0].Direction != tc.want || own[0].Partner != tc.p.Name() {
				t.Errorf("%s sees %+v", tc.p.Name(), own)
			}
		}
		r2, _ := b.EMSP.Raw(b.ctx, http.MethodGet, h.PublicURL()+"/ocpi/2.2.1/traffic/"+strconv.FormatInt(seen["eMSP Two"].ID, 10), nil, nil)
		if r2.HTTPStatus != http.StatusNotFound {
			t.Errorf("another partner's exchange: HTTP %d %s", r2.HTTPStatus, r2.Body)
		}
		r2, _ = b.EMSP.Raw(b.ctx, http.MethodGet, h.PublicURL()+"/ocpi/2.2.1/traffic?partner=eMSP+Two&platform_id="+strconv.FormatInt(seen["eMSP Two"].PlatformID, 10), nil, nil)
		for _, x := range envelope[[]traffic.Exchange](t, r2.Body) {
			if x.Partner != "eMSP One" {
				t.Errorf("a filter naming another partner reached %+v", x)
			}
		}

		// Exports: the chain as a HAR file and as JSON lines.
		r = h.Do(t, http.MethodGet, "/admin/traffic?format=har&correlation_id="+url.QueryEscape(cid), hubtest.AdminToken, nil, nil)
		var har struct {
			Log struct {
				Entries []struct {
					Request struct {
						Method string `json:"method"`
					} `json:"request"`
					Response struct {
						Status int `json:"status"`
					} `json:"response"`
				} `json:"entries"`
			} `json:"log"`
		}
		if err := json.Unmarshal(r.Body, &har); err != nil || len(har.Log.Entries) != 3 || har.Log.Entries[0].Response.Status != 200 {
			t.Errorf("HAR: %v %s", err, r.Body)
		}
		r = h.Do(t, http.MethodGet, "/admin/traffic?format=jsonl&correlation_id="+url.QueryEscape(cid), hubtest.AdminToken, nil, nil)
		if n := len(splitLines(r.Body)); n != 3 || r.Header.Get("Content-Type") != "application/x-ndjson" {
			t.Errorf("JSON lines: %d lines, %s", n, r.Header.Get("Content-Type"))
		}

		// A command relay is one chain too: the eMSP's command, the hub's
		// forward to the CPO and the hub's relay of the CPO's result.
		commandChain(t, b, cid+"-cmd")

		// The console: from the location's page to its traffic, then the
		// chain view of the PATCH, in Chromium.
		consoleChain(t, h, cid, seen["eMSP One"].ID)

		// Bad input names the field.
		r = h.Do(t, http.MethodGet, "/admin/traffic?status=6xx", hubtest.AdminToken, nil, nil)
		var bad struct {
			StatusCode int `json:"status_code"`
			Error      struct {
				Details struct {
					Field string `json:"field"`
				} `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(r.Body, &bad); err != nil || bad.StatusCode != 2001 || bad.Error.Details.Field != "status" {
			t.Errorf("status=6xx: HTTP %d %s", r.HTTPStatus, r.Body)
		}
	})
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	start := 0
	for i, c := range b {
		if c == '\n' {
			if i > start {
				out = append(out, b[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// consoleChain drives the console's Traffic pages in headless Chromium: the
// location page links to its traffic, a row links to its chain, and the
// chain view shows every hop with its answer on a time line.
func consoleChain(t *testing.T, h *hubtest.Hub, cid string, pushID int64) {
	t.Helper()
	b := browsertest.New(t)
	base := h.PublicURL() + "/console"
	b.Run(chromedp.Navigate(base + "/directory/NL/CP1/LOC1"))
	b.Run(chromedp.SetValue(chromedp.CSS("#token"), hubtest.AdminToken), chromedp.Click(chromedp.CSS("#sign-in")))
	if err := b.Try(chromedp.WaitVisible(chromedp.CSS("#traffic-link"))); err != nil {
		t.Fatalf("%v at %s: %s", err, browsertest.Get(b, chromedp.Location()), b.Text("body"))
	}
	if err := b.Try(chromedp.Click(chromedp.CSS("#traffic-link")), chromedp.WaitVisible(chromedp.CSS("#traffic"))); err != nil {
		t.Fatalf("%v at %s: %s", err, browsertest.Get(b, chromedp.Location()), b.Text("body"))
	}
	if text := b.Text("#traffic"); !strings.Contains(text, "eMSP One") || !strings.Contains(text, "CPO One") {
		t.Errorf("the location's traffic: %q", text)
	}
	b.Run(chromedp.Click(chromedp.CSS(`#traffic tr[data-id="`+strconv.FormatInt(pushID, 10)+`"] a[href*="/traffic/chain/"]`)),
		// The third hop's answer: the whole table is there.
		chromedp.WaitVisible(chromedp.CSS("#chain tbody tr.hop:nth-child(3) td.answer")))
	if loc := browsertest.Get(b, chromedp.Location()); !strings.HasSuffix(loc, "/console/traffic/chain/"+cid) {
		t.Errorf("chain link went to %s", loc)
	}
	text := b.Text("#chain")
	for _, want := range []string{"partner → hub", "hub → partner", "CPO One", "eMSP One", "eMSP Two", "PATCH locations"} {
		if !strings.Contains(text, want) {
			t.Errorf("chain view lacks %q: %q", want, text)
		}
	}
	if n := strings.Count(text, "HTTP 200 · 1000"); n != 3 {
		t.Errorf("chain view shows %d answers HTTP 200 · 1000, want 3: %q", n, text)
	}
	bars := browsertest.Get(b, chromedp.Evaluate[int](`document.querySelectorAll(".chain-svg rect").length`))
	if bars != 3 {
		t.Errorf("the time line draws %d bars, want 3", bars)
	}
	// One hop whole: the push's request and the eMSP's answer.
	b.Run(chromedp.Click(chromedp.CSS(`#chain a[href$="/traffic/`+strconv.FormatInt(pushID, 10)+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("#response-body")))
	if body := b.Text("#request-body"); !strings.Contains(body, "CHARGING") {
		t.Errorf("request body: %q", body)
	}
}

// commandChain sends UNLOCK_CONNECTOR from the eMSP with a chosen
// X-Correlation-ID and finds the command, its forward to the CPO and the
// relay of the CPO's result to the eMSP by that id.
func commandChain(t *testing.T, b *chainBundle, cid string) {
	t.Helper()
	hdr := http.Header{}
	hdr.Set("X-Correlation-ID", cid)
	uid, resp, err := b.EMSP.SendCommand(b.ctx, "UNLOCK_CONNECTOR", map[string]any{"location_id": "LOC1", "evse_uid": "E1", "connector_id": "1"}, hdr)
	if err != nil || resp.HTTPStatus != http.StatusOK {
		t.Fatalf("UNLOCK_CONNECTOR: %v %v", resp, err)
	}
	hubtest.Eventually(t, b.ctx, "the command's result at the eMSP", func() bool { return len(b.EMSP.Results(uid)) == 1 })
	if got := b.EMSP.Results(uid)[0].Header.Get("X-Correlation-ID"); got != cid {
		t.Errorf("the result's relay carries X-Correlation-ID %q, want %q", got, cid)
	}
	var chain []traffic.Exchange
	hubtest.Eventually(t, b.ctx, "the command chain recorded", func() bool {
		r := b.h.Do(t, http.MethodGet, "/admin/traffic?order=oldest&correlation_id="+url.QueryEscape(cid), hubtest.AdminToken, nil, nil)
		chain = envelope[[]traffic.Exchange](t, r.Body)
		return len(chain) >= 3
	})
	type hop struct {
		dir     traffic.Direction
		partner string
	}
	var got []hop
	for _, x := range chain {
		if x.Module != "commands" || x.HTTPStatus != http.StatusOK || x.StatusCode != 1000 {
			t.Errorf("command hop: %+v", x)
		}
		got = append(got, hop{x.Direction, x.Partner})
	}
	want := []hop{{traffic.In, "eMSP One"}, {traffic.Out, "CPO One"}, {traffic.Out, "eMSP One"}}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("command chain %v, want %v", got, want)
	}
}
