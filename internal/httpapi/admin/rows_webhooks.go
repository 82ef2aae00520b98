package admin

import (
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/ratelimit"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// webhookRows are the outgoing webhook subscriptions (ours, not an OCPI
// module: a partner manages its platform's, the admin token the
// operator's), their admin views, the rate limits of the admin API and the
// sandbox reset.
func (s *handlers) webhookRows() route.Module {
	idemKey := openapi.Parameter{Name: "Idempotency-Key", In: "header",
		Description: "IETF draft idempotency key: a repeat gets the stored answer, 409 while the first runs, 422 for a different request",
		Schema:      openapi.Schema{"type": "string", "maxLength": 257}}
	sub := openapi.Parameter{Name: "id", In: "path", Description: "subscription id", Schema: openapi.Schema{"type": "string"}}
	did := openapi.Parameter{Name: "delivery_id", In: "path", Schema: openapi.Schema{"type": "integer", "minimum": 1}}
	status := openapi.Parameter{Name: "status", In: "query", Description: "only deliveries in this status",
		Schema: openapi.Schema{"type": "string", "enum": route.AnyOf(webhook.DeliveryStatuses())}}
	withKey := []int{409, 422}
	var rows []route.Row
	add := func(r route.Row, d route.Doc) { r.Doc = d; rows = append(rows, r) }
	for _, base := range []string{"/ocpi/2.2.1/webhooks", "/admin/webhooks"} {
		who, acc, owner := "the caller's (a partner's own, or the operator's with the admin token)", route.Subscriber, webhookOwner
		if base == "/admin/webhooks" {
			who, acc, owner = "any owner's (the operator's view)", route.Admin, adminOwner
		}
		list := route.Doc{Summary: "List " + who + " subscriptions, oldest first", Data: []*webhook.Subscription{}, Paged: true}
		if base == "/admin/webhooks" {
			list.Params = []openapi.Parameter{{Name: "platform_id", In: "query", Description: "only this platform's (0: the operator's)", Schema: openapi.Schema{"type": "integer", "minimum": 0}}}
		}
		add(route.Row{Pattern: "GET " + base, Access: acc, Handler: s.handleWebhookList(owner)}, list)
		add(route.Row{Pattern: "GET " + base + "/{id}", Access: acc, Handler: s.handleWebhookGet(owner)}, route.Doc{Summary: "One of " + who + " subscriptions (never its secret)", Data: &webhook.Subscription{}, Params: []openapi.Parameter{sub}})
		add(route.Row{Pattern: "GET " + base + "/{id}/deliveries", Access: acc, Handler: s.handleWebhookDeliveries(owner)}, route.Doc{Summary: "A subscription's delivery log, newest first: status, attempts, last response code, latency, last error",
			Data: []*webhook.Delivery{}, Paged: true, Params: []openapi.Parameter{sub, status}})
		add(route.Row{Pattern: "GET " + base + "/{id}/deliveries/{delivery_id}", Access: acc, Handler: s.handleWebhookDelivery(owner)}, route.Doc{Summary: "One delivery, with the event's data", Data: &webhook.Delivery{}, Params: []openapi.Parameter{sub, did}})
		add(route.Row{Pattern: "POST " + base + "/{id}/deliveries/{delivery_id}/replay", Access: acc, Handler: s.handleWebhookReplay(owner), Options: []route.Option{route.WithIdempotencyKey}}, route.Doc{Summary: "Send a delivery's event again: a new delivery at the end of the queue, same webhook-id",
			Data: &webhook.Delivery{}, Created: true, Params: []openapi.Parameter{sub, did, idemKey}, Errors: withKey})
	}
	add(route.Row{Pattern: "POST /ocpi/2.2.1/webhooks", Access: route.Subscriber, Handler: s.handleWebhookCreate, Options: []route.Option{route.WithIdempotencyKey}}, route.Doc{
		Summary: "Subscribe a URL to events; the answer carries the secret, this once",
		Description: "url: absolute https (http only to loopback hosts in dev mode); events: names from the event list; secret: optional " +
			"(16-255 characters; generated when left out, as whsec_ and base64). Deliveries are signed with Standard Webhooks v1 headers.",
		Request: webhook.Input{}, Data: &webhook.Subscription{}, Created: true, Params: []openapi.Parameter{idemKey}, Errors: withKey,
	})
	add(route.Row{Pattern: "PUT /ocpi/2.2.1/webhooks/{id}", Access: route.Subscriber, Handler: s.handleWebhookUpdate, Options: []route.Option{route.WithIdempotencyKey}}, route.Doc{Summary: "Replace a subscription's url and events (secret and status stay unless given)",
		Request: webhook.Input{}, Data: &webhook.Subscription{}, Params: []openapi.Parameter{sub, idemKey}, Errors: withKey})
	add(route.Row{Pattern: "PATCH /ocpi/2.2.1/webhooks/{id}", Access: route.Subscriber, Handler: s.handleWebhookUpdate, Options: []route.Option{route.WithIdempotencyKey}}, route.Doc{Summary: "Change the fields given: url, events, secret, status (DISABLED stops deliveries, ACTIVE resumes)",
		Request: webhook.Input{}, Data: &webhook.Subscription{}, Params: []openapi.Parameter{sub, idemKey}, Errors: withKey})
	add(route.Row{Pattern: "DELETE /ocpi/2.2.1/webhooks/{id}", Access: route.Subscriber, Handler: s.handleWebhookDelete}, route.Doc{Summary: "Delete a subscription and its delivery log", Params: []openapi.Parameter{sub}})

	pid := openapi.Parameter{Name: "id", In: "path", Description: "platform id", Schema: openapi.Schema{"type": "integer", "minimum": 1}}
	add(route.Row{Pattern: "GET /admin/parties/{id}/rate_limits", Access: route.Admin, Handler: s.handleAdminRateLimits}, route.Doc{Tag: "admin", Summary: "A platform's rate limits: its own, the hub's defaults, those in force",
		Data: rateLimitsBody{}, Params: []openapi.Parameter{pid}})
	add(route.Row{Pattern: "PUT /admin/parties/{id}/rate_limits", Access: route.Admin, Handler: s.handleAdminSetRateLimits}, route.Doc{Tag: "admin", Summary: "Set a platform's own rate limits (left out: the default; 0: no limit in that window; {}: the defaults)",
		Request: ratelimit.Override{}, Data: rateLimitsBody{}, Params: []openapi.Parameter{pid}})
	add(route.Row{Pattern: "POST /admin/sandbox/reset", Access: route.Admin, Handler: s.handleAdminSandboxReset}, route.Doc{Tag: "admin", Summary: "On the sandbox: delete its data now (the daily reset); credentials and subscriptions stay",
		Description: "Production answers 404.", Errors: []int{404}})

	return route.Module{
		Tag: openapi.Tag{Name: "webhooks", Description: "Outgoing webhooks (ocpihub's own API, not an OCPI module): subscriptions, the delivery log, replays. " +
			"Partners manage their own with their OCPI token, the operator its own with the admin token."},
		Rows: rows,
		Schemas: func(s *openapi.Schemas) {
			events := openapi.Schema{"type": "string", "enum": route.AnyOf(event.Names())}
			st := openapi.Schema{"enum": []any{webhook.StatusActive, webhook.StatusDisabled}}
			s.Field(webhook.Subscription{}, "events", openapi.Schema{"items": events})
			s.Field(webhook.Subscription{}, "status", st)
			s.Field(webhook.Subscription{}, "url", openapi.Schema{"format": "uri", "maxLength": 2048})
			s.Field(webhook.Input{}, "events", openapi.Schema{"items": events, "minItems": 1})
			s.Field(webhook.Input{}, "status", st)
			s.Field(webhook.Input{}, "url", openapi.Schema{"maxLength": 2048})
			s.Field(webhook.Input{}, "secret", openapi.Schema{"minLength": 16, "maxLength": 255})
			s.Field(webhook.Delivery{}, "status", openapi.Schema{"enum": route.AnyOf(webhook.DeliveryStatuses())})
			s.Field(webhook.Delivery{}, "event", events)
			s.Field(webhook.Delivery{}, "data", openapi.Schema{"type": "object"})
		},
	}
}
