package bench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// BenchmarkUPIWebhook measures the payment gateway's webhook intake on both
// engines next to the no-op: signature verification, the insert that
// deduplicates by event id and the job enqueued in the same transaction
// (the PG wants an answer within seconds). Every request is a new signed
// Razorpay payment.captured event; the jobs it enqueues run in the
// background on one worker, as they would in production.
//
//	go test -run '^$' -bench UPIWebhook -benchtime 5000x ./bench/
func BenchmarkUPIWebhook(b *testing.B) {
	engines(b, func(b *testing.B, engine store.Engine) {
		cfg := app.Defaults()
		cfg.DB = storetest.URL(b, engine)
		cfg.Addr = "127.0.0.1:0"
		cfg.AdminToken = hubtest.AdminToken
		cfg.LogLevel = "error"
		cfg.DevMode = true // the built-in PG simulator: its webhook secret signs below
		a := startApp(b, cfg)
		h := &benchHub{App: a, client: NewClient(workers())}
		measure(b, h, webhookTarget(a.PublicURL()+app.UPIWebhookPath))
	})
}

// webhookSeq numbers the webhook events across targets, so a later run's
// events are new too and not answered as duplicates.
var webhookSeq atomic.Int64

// webhookTarget posts a fresh signed payment.captured event per request.
func webhookTarget(url string) Target {
	n := &webhookSeq
	return Target{Name: "POST upi webhook", NewRequest: func(ctx context.Context) (*http.Request, error) {
		i := n.Add(1)
		body := fmt.Appendf(nil, `{"entity":"event","account_id":"acc_bench","event":"payment.captured","contains":["payment"],`+
			`"payload":{"payment":{"entity":{"id":"pay_bench%010d","entity":"payment","amount":50000,"currency":"INR",`+
			`"status":"captured","order_id":"order_bench%010d","method":"upi","vpa":"driver@okbench","captured":true,`+
			`"created_at":1767225600}}},"created_at":1767225600}`, i, i)
		m := hmac.New(sha256.New, []byte(pgsim.DefaultWebhookSecret))
		m.Write(body)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Razorpay-Signature", hex.EncodeToString(m.Sum(nil)))
		req.Header.Set("X-Razorpay-Event-Id", fmt.Sprintf("evt_bench%010d", i))
		return req, nil
	}}
}
