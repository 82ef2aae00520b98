package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/ocpihub/ocpihub/internal/sim/webhooksim"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// envelope is an OCPI response as the tests read it.
type envelope struct{ ocpi.Envelope }

func (e envelope) field() string {
	if e.Error == nil || e.Error.Details == nil {
		return ""
	}
	return e.Error.Details.Field
}

// reply is one answer of the hub.
type reply struct {
	status int
	header http.Header
	env    envelope
	raw    []byte
}

// call sends a request with a JSON body (a string is sent as it is).
func call(t *testing.T, base, token, method, path string, body any, header http.Header) reply {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	resp := hubtest.DoAt(t, base, method, path, token, raw, header)
	r := reply{status: resp.HTTPStatus, header: resp.Header, raw: resp.Body}
	if err := json.Unmarshal(resp.Body, &r.env); err != nil {
		t.Fatalf("%s %s: not an envelope: %s", method, path, resp.Body)
	}
	return r
}

// decodeData decodes the envelope's data into out.
func (r reply) decodeData(t *testing.T, out any) {
	t.Helper()
	if err := json.Unmarshal(r.env.Data, out); err != nil {
		t.Fatalf("data %s: %v", r.env.Data, err)
	}
}

// pair registers a CPO (NL/CP1) and an eMSP (DE/EM1).
func pair(t *testing.T, h *hubtest.Hub) (cpo, emsp *sim.Platform) {
	t.Helper()
	return partner(t, h, "CPO", "NL", "CP1"), partner(t, h, "EMSP", "DE", "EM1")
}

// partner starts and registers a simulated platform.
func partner(t *testing.T, h *hubtest.Hub, role, cc, pid string) *sim.Platform {
	t.Helper()
	if role == "CPO" {
		return hubtest.Add(t, h, sim.StartCPO, "CPO "+pid, cc, pid).Platform
	}
	return hubtest.Add(t, h, sim.StartEMSP, "EMSP "+pid, cc, pid).Platform
}

// subscribe creates a subscription through the API with token.
func subscribe(t *testing.T, h *hubtest.Hub, token, url string, events ...string) *webhook.Subscription {
	t.Helper()
	r := call(t, h.PublicURL(), token, http.MethodPost, "/ocpi/2.2.1/webhooks", map[string]any{"url": url, "events": events}, nil)
	if r.status != http.StatusCreated || r.env.StatusCode != 1000 {
		t.Fatalf("subscribe: HTTP %d %s", r.status, r.raw)
	}
	var sub webhook.Subscription
	r.decodeData(t, &sub)
	return &sub
}

// emit records an event as a domain service would, in a transaction.
func emit(t *testing.T, h *hubtest.Hub, e event.Event) {
	t.Helper()
	err := h.DB.InTx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
		return h.Events.Emit(ctx, tx, e)
	})
	if err != nil {
		t.Fatalf("emit %s: %v", e.Name, err)
	}
}

// eventually waits until cond holds, checking every few milliseconds, or
// fails after d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	hubtest.Eventually(t, hubtest.Ctx(t, d), what, cond)
}

// deliveries returns a subscription's delivery log, oldest first.
func deliveries(t *testing.T, h *hubtest.Hub, subID string) []*webhook.Delivery {
	t.Helper()
	var all []*webhook.Delivery
	r := call(t, h.PublicURL(), hubtest.AdminTokenB64, http.MethodGet, "/admin/webhooks/"+subID+"/deliveries?limit=100", nil, nil)
	if r.env.StatusCode != 1000 {
		t.Fatalf("deliveries: %s", r.raw)
	}
	r.decodeData(t, &all)
	for i, j := 0, len(all)-1; i < j; i, j = i+1, j-1 {
		all[i], all[j] = all[j], all[i]
	}
	return all
}

// events returns the event names a receiver got, in order.
func eventNames(ds []webhooksim.Delivery) string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.Payload.Event
	}
	return strings.Join(names, ",")
}

// jsonEq reports whether two JSON texts are equal as values.
func jsonEq(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
