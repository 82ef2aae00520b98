package hubtest

import (
	"context"
	"encoding/base64"
	"github.com/ocpihub/ocpihub/internal/sim/webhooksim"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/sim"
)

// AdminTokenB64 is AdminToken as OCPI 2.2.1 sends it (base64), for tests
// that build their own Authorization header.
var AdminTokenB64 = base64.StdEncoding.EncodeToString([]byte(AdminToken))

// TokenOf is the token a registered platform calls the hub with, base64
// encoded as OCPI 2.2.1 sends it.
func TokenOf(p *sim.Platform) string { return base64.StdEncoding.EncodeToString([]byte(p.Token())) }

// StartWebhookReceiver starts a webhook endpoint that is closed when the
// test ends.
func StartWebhookReceiver(t testing.TB) *webhooksim.Receiver {
	t.Helper()
	r, err := webhooksim.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// WaitWebhooks waits up to 20 s for n deliveries at a receiver and returns
// them.
func WaitWebhooks(t testing.TB, r *webhooksim.Receiver, n int) []webhooksim.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := r.WaitFor(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
