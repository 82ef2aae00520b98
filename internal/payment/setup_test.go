package payment_test

import (
	"context"
	"encoding/json"
	"github.com/ocpihub/ocpihub/internal/sim/ptpsim"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/schematest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// bundle is a hub with two CPOs, an eMSP and a PTP registered. CPO One
// (IN/CP1) publishes LOC1 (EVSEs E1, E2) and LOC2 (E3), priced by tariff T1
// with a preauthorize_amount of 50; CPO Two (IN/CP2) publishes LOC9 (E9).
type bundle struct {
	h      *hubtest.Hub
	cpo    *sim.CPO
	cpo2   *sim.CPO
	emsp   *sim.EMSP
	ptp    *ptpsim.PTP
	events *hubtest.Recorder
	ctx    context.Context
}

// options records events and makes the outbox and commands fast.
var options = hubtest.Configure(true, func(c *app.Config) {
	c.PushMaxAttempts = 5
	c.ForwardTimeout = 2 * time.Second
})

// each runs fn in parallel on each engine, on a bundle whose PTP speaks
// 2.2.1, of a hub started with options and then opts.
func each(t *testing.T, fn func(*testing.T, *bundle), opts ...func(*hubtest.Options)) {
	t.Parallel()
	hubtest.EachWith(t, func(t *testing.T, h *hubtest.Hub) *bundle { return setup(t, h, "2.2.1") }, fn, append([]func(*hubtest.Options){options}, opts...)...)
}

// otherPTP registers a second PTP (NL/OPT), a stranger to the bundle PTP's
// terminals and payments.
func (b *bundle) otherPTP(t *testing.T) *ptpsim.PTP {
	t.Helper()
	return hubtest.Add(t, b.h, ptpsim.Start, "Other PTP", "NL", "OPT")
}

// setup registers the partners; ptpVersion is the version the PTP speaks
// ("2.2.1" or "2.3.0").
func setup(t *testing.T, h *hubtest.Hub, ptpVersion string) *bundle {
	t.Helper()
	b := &bundle{h: h, ctx: hubtest.Ctx(t, 90*time.Second), events: h.Events.(*hubtest.Recorder)}
	b.cpo = hubtest.Add(t, h, sim.StartCPO, "CPO One", "IN", "CP1")
	b.cpo2 = hubtest.Add(t, h, sim.StartCPO, "CPO Two", "IN", "CP2")
	b.emsp = hubtest.Add(t, h, sim.StartEMSP, "eMSP One", "DE", "EM1")
	b.ptp = hubtest.Add(t, h, ptpsim.Start, "Terminals Inc", "NL", "PAY", func(o *sim.Options) { o.Versions = []string{ptpVersion} })
	if got := b.ptp.HubVersion(); got != ptpVersion {
		t.Fatalf("the PTP speaks %s with the hub, want %s", got, ptpVersion)
	}
	tariff := hubtest.Tariff("IN", "CP1", "T1", ocpi.NewDateTime(time.Now()).String())
	tariff["type"], tariff["preauthorize_amount"] = "AD_HOC_PAYMENT", 50
	if err := b.cpo.PutTariff(b.ctx, "T1", tariff); err != nil {
		t.Fatal(err)
	}
	for id, evses := range map[string][]string{"LOC1": {"E1", "E2"}, "LOC2": {"E3"}} {
		if err := b.cpo.PutLocation(b.ctx, id, priced(sim.LocationObject("IN", "CP1", id, evses...), "T1")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.cpo2.PublishLocation(b.ctx, "LOC9", "E9"); err != nil {
		t.Fatal(err)
	}
	return b
}

// priced makes every connector of a location name a tariff.
func priced(loc map[string]any, tariff string) map[string]any {
	for _, e := range loc["evses"].([]any) {
		for _, c := range e.(map[string]any)["connectors"].([]any) {
			c.(map[string]any)["tariff_ids"] = []any{tariff}
		}
	}
	return loc
}

// data decodes an answer's data.
func data(t *testing.T, resp *ocpiclient.Response, out any) {
	t.Helper()
	if resp.Envelope == nil || len(resp.Envelope.Data) == 0 {
		t.Fatalf("answer without data: HTTP %d %s", resp.HTTPStatus, resp.Body)
	}
	if err := json.Unmarshal(resp.Envelope.Data, out); err != nil {
		t.Fatal(err)
	}
}

// refused checks a refusal: HTTP status, status_code and the field named.
func refused(t *testing.T, resp *ocpiclient.Response, err error, httpStatus, code int, field string) {
	t.Helper()
	hubtest.MustStatus(t, resp, err, httpStatus, code)
	if got := hubtest.ErrorField(resp); got != field {
		t.Fatalf("error names field %q, want %q: %s", got, field, resp.Body)
	}
}

// wait waits until cond holds, re-checking whenever p receives a request.
func wait(t *testing.T, ctx context.Context, p *sim.Platform, what string, cond func() bool) {
	t.Helper()
	if err := p.Until(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// terminalAt reads a terminal from the hub as a CPO (nil when 404).
func terminalAt(t *testing.T, ctx context.Context, c *sim.CPO, id string) map[string]any {
	t.Helper()
	resp, err := c.Payments(ctx, http.MethodGet, "/terminals/"+id, nil, nil)
	if resp == nil {
		t.Fatal(err)
	}
	if resp.HTTPStatus == http.StatusNotFound {
		return nil
	}
	var term map[string]any
	data(t, hubtest.MustStatus(t, resp, err, http.StatusOK, 1000), &term)
	return term
}

// list reads a payments list from the hub and returns its items.
func list(t *testing.T, ctx context.Context, p *sim.Platform, role, path string) []map[string]any {
	t.Helper()
	base, ok := p.HubEndpoint("payments", role)
	if !ok {
		t.Fatal("no payments endpoint")
	}
	resp, err := p.Raw(ctx, http.MethodGet, base+path, nil, nil)
	var items []map[string]any
	data(t, hubtest.MustStatus(t, resp, err, http.StatusOK, 1000), &items)
	return items
}

// schema validates a body a simulator received against one of the schemas.
func schema(t *testing.T, name string, body any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := schematest.OCPI221().Validate(name, b); err != nil {
		t.Errorf("%s received: %v\n%s", name, err, b)
	}
}

// strs reads a JSON list of strings.
func strs(v any) []string {
	items, _ := v.([]any)
	out := make([]string, len(items))
	for i, it := range items {
		out[i], _ = it.(string)
	}
	return out
}

func join(v any) string { return strings.Join(strs(v), ",") }

// counter reads a counter of the hub's registry with a label value.
func counter(t *testing.T, h *hubtest.Hub, name, label string) float64 {
	t.Helper()
	mfs, err := h.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
