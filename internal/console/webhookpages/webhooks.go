// Package webhookpages is the console's webhooks area: subscriptions, their deliveries and replays.
package webhookpages

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// deliveriesPageSize is the rows of a delivery log page.
const deliveriesPageSize = 25

// everyOwner sees the subscriptions of the operator and of every partner:
// the console is the operator's.
var everyOwner = webhook.Owner{All: true}

type webhooksView struct {
	Subscriptions []*webhook.Subscription
	Pager         ui.Pager
}

type webhookView struct {
	*webhook.Subscription
	Deliveries []*webhook.Delivery
	Pager      ui.Pager
	States     []string
}

// PageTitle names the page after the subscription.
func (v webhookView) PageTitle() string { return "Webhook " + v.URL }

// Config is what the webhooks pages need from the console.
type Config struct {
	// Webhooks is the outgoing webhooks service (nil: no webhooks pages).
	Webhooks *webhook.Service
	Logger   *slog.Logger
}

type pages struct {
	cfg    Config
	logger *slog.Logger
}

// Pages returns the area's pages and actions.
func Pages(cfg Config) ([]ui.Page, []ui.Action) {
	c := &pages{cfg: cfg, logger: cfg.Logger}
	return c.webhookPages()
}

func (c *pages) webhookPages() ([]ui.Page, []ui.Action) {
	if c.cfg.Webhooks == nil {
		return nil, nil
	}
	return []ui.Page{
			{
				Path: "/webhooks", Title: "Webhooks", Section: "Integrations", Nav: "Webhooks", Template: "webhooks", Refresh: 30,
				Load: func(r *http.Request) (any, error) {
					list, pager, err := ui.CountedPage(r, 50, func() (int, error) {
						_, page, err := c.cfg.Webhooks.List(r.Context(), everyOwner, 0, ocpi.PageRequest{Limit: 0})
						return int(page.Total), err
					}, func(offset, limit int) ([]*webhook.Subscription, error) {
						list, _, err := c.cfg.Webhooks.List(r.Context(), everyOwner, 0, ocpi.PageRequest{Offset: offset, Limit: limit})
						return list, err
					})
					if err != nil {
						return nil, err
					}
					return webhooksView{Subscriptions: list, Pager: pager}, nil
				},
			},
			{
				Path: "/webhooks/{id}", Title: "Webhook", Template: "webhook", Refresh: 10,
				Load: c.loadWebhook,
			},
		}, []ui.Action{{
			Path: "/webhooks/{id}/enable",
			Do: func(r *http.Request) (ui.Result, error) {
				id := r.PathValue("id")
				back := "/webhooks/" + id
				active := webhook.StatusActive
				sub, err := c.cfg.Webhooks.Update(r.Context(), everyOwner, id, webhook.Input{Status: &active})
				if err != nil {
					return ui.Result{Redirect: back}, err
				}
				c.logger.InfoContext(r.Context(), "console: webhook subscription enabled", "subscription_id", id)
				return ui.Result{Redirect: back, Flash: "The subscription to " + sub.URL + " is active again."}, nil
			},
		}, {
			Path: "/webhooks/{id}/deliveries/{delivery}/replay",
			Do: func(r *http.Request) (ui.Result, error) {
				id := r.PathValue("id")
				back := "/webhooks/" + id
				did, err := ui.PathInt(r, "delivery")
				if err != nil {
					return ui.Result{Redirect: back}, err
				}
				d, err := c.cfg.Webhooks.Replay(r.Context(), everyOwner, id, did)
				if err != nil {
					return ui.Result{Redirect: back}, err
				}
				c.logger.InfoContext(r.Context(), "console: webhook delivery replayed", "subscription_id", id, "delivery_id", did, "replay_id", d.ID)
				return ui.Result{Redirect: back, Flash: fmt.Sprintf("Delivery %d (%s) is sent again as delivery %d.", did, d.Event, d.ID)}, nil
			},
		}}
}

func (c *pages) loadWebhook(r *http.Request) (any, error) {
	ctx := r.Context()
	id := r.PathValue("id")
	sub, err := c.cfg.Webhooks.Find(ctx, everyOwner, id)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	f := webhook.DeliveryFilter{Status: strings.ToUpper(q.Get("state"))}
	if f.Status != "" && !slices.Contains(webhook.DeliveryStatuses(), f.Status) {
		return nil, ocpi.Invalid("state", "must be one of "+strings.Join(webhook.DeliveryStatuses(), ", "))
	}
	pr := ocpi.PageRequest{Limit: deliveriesPageSize + 1}
	if a := q.Get("after"); a != "" {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || n <= 0 {
			return nil, ocpi.Invalid("after", "must be a delivery id")
		}
		pr.After = &ocpi.Cursor{Key: n}
	}
	list, _, err := c.cfg.Webhooks.Deliveries(ctx, everyOwner, id, f, pr)
	if err != nil {
		return nil, err
	}
	more := len(list) > deliveriesPageSize
	if more {
		list = list[:deliveriesPageSize]
	}
	var last int64
	if len(list) > 0 {
		last = list[len(list)-1].ID
	}
	return webhookView{Subscription: sub, Deliveries: list, Pager: ui.KeysetPager(r, len(list), last, more), States: webhook.DeliveryStatuses()}, nil
}
