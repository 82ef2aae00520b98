package app_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/devgw"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
)

func TestNewPaymentGateway(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// No PG and not in dev mode: UPI payments are off.
	if _, err := app.NewPaymentGateway(app.Defaults(), "", nil, nil, devgw.Simulators()); !errors.Is(err, pg.ErrNotConfigured) {
		t.Errorf("no PG: %v", err)
	}

	// Dev mode without a base URL: the built-in simulator, whose signed
	// webhooks reach the hub's webhook URL and verify with the gateway.
	got := make(chan *pg.Event, 1)
	var gw *app.PaymentGateway
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, err := gw.VerifyWebhook(r.Header, body)
		if err != nil {
			t.Errorf("the simulator's webhook does not verify: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		got <- ev
	}))
	defer hook.Close()
	cfg := app.Defaults()
	cfg.DevMode = true
	cfg.PGWebhookSecret = "whsec-dev, whsec-old"
	gw = gateway(t, cfg, hook.URL+"/ocpi/2.2.1/payments/upi/webhook")
	if gw.Sim == nil {
		t.Fatal("dev mode started no simulator")
	}
	o, err := gw.CreateOrder(ctx, pg.OrderRequest{Amount: pg.INR(10000)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gw.Sim.(*pgsim.Server).Pay(ctx, o.ID, pgsim.Captured); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-got:
		if ev.OrderID != o.ID || ev.Status != pg.PaymentCaptured {
			t.Errorf("event %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("no webhook")
	}

	// A base URL: a client for it, no simulator (dev mode or not).
	cfg.PGBaseURL, cfg.PGKeyID, cfg.PGKeySecret = "https://api.pg.example", "rzp_live_x", "secret"
	live := gateway(t, cfg, "")
	if c, ok := live.Gateway.(*pg.Client); !ok || live.Sim != nil || c.BaseURL() != "https://api.pg.example" {
		t.Errorf("gateway %+v", live)
	}
	cfg.PGKeySecret = ""
	if _, err := app.NewPaymentGateway(cfg, "", nil, nil, devgw.Simulators()); err == nil {
		t.Error("a real PG without a key secret was accepted")
	}
}
