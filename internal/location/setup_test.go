package location_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// bundle is a hub with a CPO (NL/CP1) and two eMSPs registered
// (hubtest.Trio).
type bundle struct {
	h *hubtest.Hub
	hubtest.Cast
	ctx context.Context
}

// fastPush makes the outbox retry quickly and give up after attempts.
func fastPush(attempts int) func(*hubtest.Options) {
	return hubtest.Configure(false, func(c *app.Config) {
		c.PushMaxAttempts = attempts
		c.ForwardTimeout = 500 * time.Millisecond
	})
}

// each runs fn in parallel on each engine, on a bundle of a hub started
// with opts.
func each(t *testing.T, fn func(*testing.T, *bundle), opts ...func(*hubtest.Options)) {
	t.Parallel()
	hubtest.EachWith(t, setup, fn, opts...)
}

func setup(t *testing.T, h *hubtest.Hub) *bundle {
	t.Helper()
	return &bundle{h: h, Cast: h.Trio(t, "NL"), ctx: hubtest.Ctx(t, 60*time.Second)}
}

// locationJSON returns a valid location of the CPO with the given EVSEs
// (uid:status pairs), each with one T2 connector referencing tariff T1.
func locationJSON(cc, pid, id, lat, lon, lastUpdated string, evses ...string) map[string]any {
	var list []any
	for _, e := range evses {
		uid, status, _ := strings.Cut(e, ":")
		list = append(list, evseJSON(uid, status, lastUpdated))
	}
	loc := map[string]any{
		"country_code": cc, "party_id": pid, "id": id, "publish": true,
		"name": "Station " + id, "address": "Main Street 1", "city": "Bengaluru", "country": "IND",
		"coordinates": map[string]any{"latitude": lat, "longitude": lon},
		"time_zone":   "Asia/Kolkata", "last_updated": lastUpdated,
		"x_vendor_note": "kept as sent",
	}
	if list != nil {
		loc["evses"] = list
	}
	return loc
}

func evseJSON(uid, status, lastUpdated string) map[string]any {
	return map[string]any{"uid": uid, "evse_id": "IN*CP1*E" + uid, "status": status, "last_updated": lastUpdated,
		"capabilities": []any{"REMOTE_START_STOP_CAPABLE"},
		"connectors":   []any{connectorJSON("1", "IEC_62196_T2", "AC_3_PHASE", 230, 32, lastUpdated, "T1")}}
}

func connectorJSON(id, standard, power string, volt, amp int, lastUpdated string, tariffs ...string) map[string]any {
	c := map[string]any{"id": id, "standard": standard, "format": "SOCKET", "power_type": power,
		"max_voltage": volt, "max_amperage": amp, "last_updated": lastUpdated}
	if len(tariffs) > 0 {
		c["tariff_ids"] = tariffs
	}
	return c
}

// hubGet calls a hub URL as a platform and decodes data.
func hubGet(t *testing.T, p *sim.Platform, module, role, suffix string, header http.Header) (*ocpiclient.Response, map[string]any) {
	t.Helper()
	base, ok := p.HubEndpoint(module, role)
	if !ok {
		t.Fatalf("hub lists no %s %s", module, role)
	}
	resp, err := p.Raw(context.Background(), http.MethodGet, base+suffix, nil, header)
	if err != nil && resp == nil {
		t.Fatal(err)
	}
	var data map[string]any
	if resp.Envelope != nil && len(resp.Envelope.Data) > 0 {
		_ = json.Unmarshal(resp.Envelope.Data, &data)
	}
	return resp, data
}

// waitState waits until cond holds, re-checking whenever p receives a
// request.
func waitState(t *testing.T, ctx context.Context, p *sim.Platform, what string, cond func() bool) {
	t.Helper()
	if err := p.Until(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// putLocation has cpo (NL/pid) put location id at the usual coordinates,
// last updated at hubtest.Stamp(at), with evses (uid:status pairs).
func (b *bundle) putLocation(t *testing.T, cpo *sim.CPO, pid, id string, at int, evses ...string) {
	t.Helper()
	if err := cpo.PutLocation(b.ctx, id, locationJSON("NL", pid, id, "12.97160", "77.59460", hubtest.Stamp(at), evses...)); err != nil {
		t.Fatal(err)
	}
}

// putT1 has CPO One put its tariff T1.
func (b *bundle) putT1(t *testing.T) {
	t.Helper()
	if err := b.CPO.PutTariff(b.ctx, "T1", hubtest.Tariff("NL", "CP1", "T1", hubtest.Stamp(0))); err != nil {
		t.Fatal(err)
	}
}
