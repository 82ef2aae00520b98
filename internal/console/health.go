package console

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/party/health"
)

// failingReceivers adds a problem to v for each connected platform whose
// receiver is DEGRADED (party health: its pushes keep failing, although it
// may still call us and so look CONNECTED) and returns their number.
func (c *Console) failingReceivers(ctx context.Context, platforms []*party.Platform, v *overviewView) (int, error) {
	hs, err := c.cfg.Parties.Health(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range platforms {
		h := hs[p.ID]
		if p.Status != party.StatusConnected || !h.Degraded() {
			continue
		}
		n++
		v.Problems = append(v.Problems, Problem{What: p.Name + "'s receiver is failing", Detail: healthDetail(h),
			At: h.Since.Time, Href: "/parties/" + strconv.FormatInt(p.ID, 10), Tone: "bad"})
	}
	return n, nil
}

// tokensAtRest is the overview's line on how partner tokens are stored.
func tokensAtRest(unencrypted bool) healthItem {
	if unencrypted {
		return healthItem{Label: "Partner tokens at rest", Tone: "warn",
			Value: "stored unencrypted: set --secret-key (OCPIHUB_SECRET_KEY) to seal them and webhook secrets"}
	}
	return healthItem{Label: "Partner tokens at rest", Value: "sealed with the secret key (AES-256-GCM)", Tone: "ok"}
}

// healthDetail says in a line why a receiver is DEGRADED.
func healthDetail(h *health.Health) string {
	s := fmt.Sprintf("%d pushes failed in a row", h.ConsecutiveFailures)
	if h.LagSeconds > 0 {
		s += ", oldest waiting " + (time.Duration(h.LagSeconds) * time.Second).String()
	}
	if h.LastError != "" {
		s += ": " + h.LastError
	}
	return s
}
