package webhook_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// TestDeliveriesToInternalAddressesRefused: outside dev mode, with an
// allow-list naming only the partner's OCPI port, a partner's (and the
// operator's) subscription to another loopback port is refused at dial
// time: the receiver sees no connection and the delivery log says why,
// without telling a closed port from a live one.
func TestDeliveriesToInternalAddressesRefused(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		c := hubtest.StartSim(t, sim.StartCPO, "CPO GRD", "NL", "GRD")
		ap := netip.MustParseAddrPort(strings.TrimPrefix(c.URL(), "http://"))
		h := hubtest.Start(t, engine, func(o *hubtest.Options) {
			o.Config = func(cfg *app.Config) {
				cfg.DevMode = false
				cfg.OutboundAllow = []netguard.Rule{{Prefix: netip.PrefixFrom(ap.Addr(), 32), Port: ap.Port()}}
			}
		})
		h.Register(t, c.Platform)

		var conns atomic.Int64
		inside := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		inside.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}
		inside.StartTLS()
		t.Cleanup(inside.Close)

		partnerSub := subscribe(t, h, hubtest.TokenOf(c.Platform), inside.URL+"/in", "location.updated")
		operatorSub := subscribe(t, h, hubtest.AdminTokenB64, inside.URL+"/in", "location.updated")
		emit(t, h, event.Event{Name: event.LocationUpdated, Data: map[string]string{"location_id": "L1"}, Public: true})
		for _, sub := range []*webhook.Subscription{partnerSub, operatorSub} {
			eventually(t, 20*time.Second, "a failed attempt in the delivery log", func() bool {
				ds := deliveries(t, h, sub.ID)
				return len(ds) == 1 && ds[0].Attempts >= 1
			})
			d := deliveries(t, h, sub.ID)[0]
			if d.Status == webhook.StatusDelivered || d.ResponseCode != 0 || !strings.Contains(d.LastError, "not one the hub may call") {
				t.Errorf("subscription %s: delivery %+v, want refused by the address guard", sub.ID, d)
			}
		}
		if n := conns.Load(); n != 0 {
			t.Errorf("the internal receiver accepted %d connections, want none", n)
		}
	})
}
