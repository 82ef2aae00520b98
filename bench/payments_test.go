package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim/ptpsim"
)

// Direct Payment scenarios (see README.md):
//
//   - advice-ingest: a PTP posts a new financial advice confirmation for a
//     reference no payment has (validation of either Price shape, canonical
//     form, immutability check, the payment lookup, the flag with its
//     event, in one transaction).
//   - terminals-page: a CPO reads a page of terminals (its own and the
//     unclaimed ones) among 300.
func init() {
	scenarios = append(scenarios,
		scenario{name: "advice-ingest", seed: seedPayments, target: adviceTarget},
		scenario{name: "terminals-page", target: func(h *benchHub) Target {
			return h.get("/ocpi/2.2.1/payments/terminals?offset=100&limit=50", h.cpoToken)
		}},
	)
}

// seedPayments registers a PTP and its 300 terminals, and checks that the
// scenarios are answered with OCPI 1000.
func seedPayments(b testing.TB, h *benchHub) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := hubtest.AddTo(b, h.App, ptpsim.Start, "Bench PTP", "NL", "BPT")
	h.ptpToken = p.Token()
	for i := range 300 {
		resp, err := p.CreateTerminal(ctx, ptpsim.NewTerminal(fmt.Sprintf("BTERM-%03d", i), nil))
		if err != nil || resp.HTTPStatus != http.StatusCreated {
			b.Fatalf("seed terminal %d: %v %v", i, resp, err)
		}
	}
	for _, name := range []string{"advice-ingest", "terminals-page"} {
		for _, s := range scenarios {
			if s.name == name {
				if err := probe(ctx, h, s.target(h)); err != nil {
					b.Fatalf("%s: %v", s.name, err)
				}
			}
		}
	}
}

// adviceSeq numbers the bench confirmations across targets.
var adviceSeq atomic.Int64

// adviceTarget posts a new confirmation per request.
func adviceTarget(h *benchHub) Target {
	return h.post("POST confirmation", "/ocpi/2.2.1/payments/financial-advice-confirmations", h.ptpToken, func() []byte {
		i := adviceSeq.Add(1)
		b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("BFAC-%d", i), "authorization_reference": fmt.Sprintf("bref-%d", i),
			"total_costs": map[string]any{"excl_vat": 231.25, "incl_vat": 272.88}, "currency": "INR",
			"eft_data":            []string{"RuPay", "AID: A0000005241010", "Nr: **** **** **** 1234", "Amount: INR 272.88"},
			"capture_status_code": "SUCCESS", "last_updated": time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)})
		return b
	}, http.StatusCreated)
}
