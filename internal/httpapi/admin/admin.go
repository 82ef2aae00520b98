// Package admin serves ocpihub's own APIs beside OCPI: the operator's
// platforms and invitations, rate limits and the sandbox reset, webhook
// subscriptions (partners' and the operator's) and the traffic inspector.
// It declares their route rows; httpapi assembles them.
package admin

import (
	"context"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/ratelimit"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// Services are what the admin routes call (the fields of httpapi.Config of
// the same names).
type Services struct {
	Parties *party.Service
	// SandboxParties, on a production hub with a sandbox, is the sandbox's
	// registry: invitations asked for with "sandbox": true are issued there.
	SandboxParties *party.Service
	// Sandbox marks the sandbox instance; ResetSandboxFunc wipes its data.
	Sandbox          bool
	ResetSandboxFunc func(ctx context.Context) error
	Webhooks         *webhook.Service
	RateLimiter      *ratelimit.Limiter
	// DB holds the recorded traffic; Version is the build's, named in HAR
	// exports.
	DB      *store.DB
	Version string
	// Hub is the hub's delivery, whose backlog the operator reads.
	Hub *hub.Hub
}

// handlers answer the admin routes through the kit.
type handlers struct {
	*kit.Kit
	cfg Services
}

// Modules returns the admin API's modules: platforms and invitations,
// webhooks (with rate limits and the sandbox reset), traffic, the delivery backlog.
func Modules(k *kit.Kit, svc Services) []route.Module {
	s := &handlers{Kit: k, cfg: svc}
	return []route.Module{s.adminRows(), s.webhookRows(), s.trafficRows(), s.deliveryRows()}
}
