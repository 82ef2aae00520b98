package admin

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// webhookOwner returns whose subscriptions the caller of /ocpi/2.2.1/webhooks
// manages: its platform's, or the operator's for the admin token.
func webhookOwner(r *http.Request) webhook.Owner {
	c := party.CallerFrom(r.Context())
	if c == nil || c.Kind == party.CallerAdmin {
		return webhook.Owner{}
	}
	return webhook.Owner{PlatformID: c.PlatformID}
}

// adminOwner is every owner (the admin API).
func adminOwner(*http.Request) webhook.Owner { return webhook.Owner{All: true} }

func (s *handlers) webhooks() (*webhook.Service, error) {
	if s.cfg.Webhooks == nil {
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "webhooks are not enabled on this hub"}
	}
	return s.cfg.Webhooks, nil
}

// handleWebhookCreate serves POST /ocpi/2.2.1/webhooks: 201 with the
// subscription and, this once, its secret.
func (s *handlers) handleWebhookCreate(w http.ResponseWriter, r *http.Request) error {
	wh, err := s.webhooks()
	if err != nil {
		return err
	}
	var in webhook.Input
	if err := kit.Decode(r, &in); err != nil {
		return err
	}
	sub, err := wh.Create(r.Context(), webhookOwner(r), in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", s.PublicURL("/ocpi/2.2.1/webhooks/"+sub.ID))
	return s.Created(w, sub)
}

// webhookPage serves one page of a webhooks listing: list reads the page
// req asks for, with the request's query for its filters.
func webhookPage[T any](s *handlers, w http.ResponseWriter, r *http.Request, list func(wh *webhook.Service, q url.Values, req ocpi.PageRequest) ([]T, ocpi.Page, error)) error {
	wh, err := s.webhooks()
	if err != nil {
		return err
	}
	return kit.ListPage(s.Kit, w, r, func(req ocpi.PageRequest) ([]T, ocpi.Page, error) {
		return list(wh, r.URL.Query(), req)
	})
}

// handleWebhookList serves the subscriptions of an owner, paged.
func (s *handlers) handleWebhookList(owner func(*http.Request) webhook.Owner) route.Func {
	return func(w http.ResponseWriter, r *http.Request) error {
		return webhookPage(s, w, r, func(wh *webhook.Service, q url.Values, req ocpi.PageRequest) ([]*webhook.Subscription, ocpi.Page, error) {
			var platformID int64
			if v := q.Get("platform_id"); v != "" {
				var err error
				if platformID, err = strconv.ParseInt(v, 10, 64); err != nil || platformID < 0 {
					return nil, ocpi.Page{}, ocpi.Invalid("platform_id", "must be a platform id")
				}
			}
			return wh.List(r.Context(), owner(r), platformID, req)
		})
	}
}

// handleWebhookGet serves one subscription.
func (s *handlers) handleWebhookGet(owner func(*http.Request) webhook.Owner) route.Func {
	return func(w http.ResponseWriter, r *http.Request) error {
		return s.withWebhooks(w, s.OK, func(wh *webhook.Service) (any, error) {
			return wh.Find(r.Context(), owner(r), r.PathValue("id"))
		})
	}
}

// handleWebhookUpdate serves PUT (replace url and events) and PATCH (change
// the fields sent).
func (s *handlers) handleWebhookUpdate(w http.ResponseWriter, r *http.Request) error {
	return s.withWebhooks(w, s.OK, func(wh *webhook.Service) (any, error) {
		var in webhook.Input
		if err := kit.Decode(r, &in); err != nil {
			return nil, err
		}
		if r.Method == http.MethodPut {
			return wh.Replace(r.Context(), webhookOwner(r), r.PathValue("id"), in)
		}
		return wh.Update(r.Context(), webhookOwner(r), r.PathValue("id"), in)
	})
}

// handleWebhookDelete removes a subscription and its delivery log.
func (s *handlers) handleWebhookDelete(w http.ResponseWriter, r *http.Request) error {
	return s.withWebhooks(w, s.OK, func(wh *webhook.Service) (any, error) {
		return nil, wh.Delete(r.Context(), webhookOwner(r), r.PathValue("id"))
	})
}

// withWebhooks serves a call on one subscription or delivery: do acts on
// it and gives the data answer writes.
func (s *handlers) withWebhooks(w http.ResponseWriter, answer func(http.ResponseWriter, any) error, do func(wh *webhook.Service) (any, error)) error {
	wh, err := s.webhooks()
	if err != nil {
		return err
	}
	data, err := do(wh)
	if err != nil {
		return err
	}
	return answer(w, data)
}

// handleWebhookDeliveries serves a subscription's delivery log, newest
// first, paged; ?status= narrows it.
func (s *handlers) handleWebhookDeliveries(owner func(*http.Request) webhook.Owner) route.Func {
	return func(w http.ResponseWriter, r *http.Request) error {
		return webhookPage(s, w, r, func(wh *webhook.Service, q url.Values, req ocpi.PageRequest) ([]*webhook.Delivery, ocpi.Page, error) {
			f := webhook.DeliveryFilter{Status: strings.ToUpper(q.Get("status"))}
			return wh.Deliveries(r.Context(), owner(r), r.PathValue("id"), f, req)
		})
	}
}

func deliveryID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("delivery_id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, ocpi.Invalid("delivery_id", "must be a positive integer")
	}
	return id, nil
}

// handleWebhookDelivery serves one delivery with the event's data.
func (s *handlers) handleWebhookDelivery(owner func(*http.Request) webhook.Owner) route.Func {
	return s.onDelivery(owner, (*webhook.Service).Delivery, s.OK)
}

// handleWebhookReplay sends a delivery's event again: 201 with the new
// delivery.
func (s *handlers) handleWebhookReplay(owner func(*http.Request) webhook.Owner) route.Func {
	return s.onDelivery(owner, (*webhook.Service).Replay, s.Created)
}

// onDelivery serves a route on one delivery of a subscription: act on the
// delivery the path names, answered with the delivery act returns.
func (s *handlers) onDelivery(owner func(*http.Request) webhook.Owner,
	act func(*webhook.Service, context.Context, webhook.Owner, string, int64) (*webhook.Delivery, error),
	answer func(http.ResponseWriter, any) error) route.Func {
	return func(w http.ResponseWriter, r *http.Request) error {
		return s.withWebhooks(w, answer, func(wh *webhook.Service) (any, error) {
			id, err := deliveryID(r)
			if err != nil {
				return nil, err
			}
			return act(wh, r.Context(), owner(r), r.PathValue("id"), id)
		})
	}
}
