package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"

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

func (s *Server) webhooks() (*webhook.Service, error) {
	if s.cfg.Webhooks == nil {
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "webhooks are not enabled on this hub"}
	}
	return s.cfg.Webhooks, nil
}

// handleWebhookCreate serves POST /ocpi/2.2.1/webhooks: 201 with the
// subscription and, this once, its secret.
func (s *Server) handleWebhookCreate(w http.ResponseWriter, r *http.Request) error {
	wh, err := s.webhooks()
	if err != nil {
		return err
	}
	var in webhook.Input
	if err := decode(r, &in); err != nil {
		return err
	}
	sub, err := wh.Create(r.Context(), webhookOwner(r), in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", s.publicURL("/ocpi/2.2.1/webhooks/"+sub.ID))
	return s.created(w, sub)
}

// handleWebhookList serves the subscriptions of an owner, paged.
func (s *Server) handleWebhookList(owner func(*http.Request) webhook.Owner) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.webhooks()
		if err != nil {
			return err
		}
		q := r.URL.Query()
		req, err := ocpi.ParsePageRequest(q, ocpi.MaxLimit)
		if err != nil {
			return err
		}
		var platformID int64
		if v := q.Get("platform_id"); v != "" {
			if platformID, err = strconv.ParseInt(v, 10, 64); err != nil || platformID < 0 {
				return ocpi.Invalid("platform_id", "must be a platform id")
			}
		}
		subs, page, err := wh.List(r.Context(), owner(r), platformID, req)
		if err != nil {
			return err
		}
		return s.page(w, r, req, subs, len(subs), page)
	}
}

// handleWebhookGet serves one subscription.
func (s *Server) handleWebhookGet(owner func(*http.Request) webhook.Owner) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.webhooks()
		if err != nil {
			return err
		}
		sub, err := wh.Find(r.Context(), owner(r), r.PathValue("id"))
		if err != nil {
			return err
		}
		return s.ok(w, sub)
	}
}

// handleWebhookUpdate serves PUT (replace url and events) and PATCH (change
// the fields sent).
func (s *Server) handleWebhookUpdate(w http.ResponseWriter, r *http.Request) error {
	wh, err := s.webhooks()
	if err != nil {
		return err
	}
	var in webhook.Input
	if err := decode(r, &in); err != nil {
		return err
	}
	var sub *webhook.Subscription
	if r.Method == http.MethodPut {
		sub, err = wh.Replace(r.Context(), webhookOwner(r), r.PathValue("id"), in)
	} else {
		sub, err = wh.Update(r.Context(), webhookOwner(r), r.PathValue("id"), in)
	}
	if err != nil {
		return err
	}
	return s.ok(w, sub)
}

// handleWebhookDelete removes a subscription and its delivery log.
func (s *Server) handleWebhookDelete(w http.ResponseWriter, r *http.Request) error {
	wh, err := s.webhooks()
	if err != nil {
		return err
	}
	if err := wh.Delete(r.Context(), webhookOwner(r), r.PathValue("id")); err != nil {
		return err
	}
	return s.ok(w, nil)
}

// handleWebhookDeliveries serves a subscription's delivery log, newest
// first, paged; ?status= narrows it.
func (s *Server) handleWebhookDeliveries(owner func(*http.Request) webhook.Owner) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.webhooks()
		if err != nil {
			return err
		}
		q := r.URL.Query()
		req, err := ocpi.ParsePageRequest(q, ocpi.MaxLimit)
		if err != nil {
			return err
		}
		f := webhook.DeliveryFilter{Status: strings.ToUpper(q.Get("status"))}
		list, page, err := wh.Deliveries(r.Context(), owner(r), r.PathValue("id"), f, req)
		if err != nil {
			return err
		}
		return s.page(w, r, req, list, len(list), page)
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
func (s *Server) handleWebhookDelivery(owner func(*http.Request) webhook.Owner) apiFunc {
	return s.onDelivery(owner, (*webhook.Service).Delivery, s.ok)
}

// handleWebhookReplay sends a delivery's event again: 201 with the new
// delivery.
func (s *Server) handleWebhookReplay(owner func(*http.Request) webhook.Owner) apiFunc {
	return s.onDelivery(owner, (*webhook.Service).Replay, s.created)
}

// onDelivery serves a route on one delivery of a subscription: act on the
// delivery the path names, answered with the delivery act returns.
func (s *Server) onDelivery(owner func(*http.Request) webhook.Owner,
	act func(*webhook.Service, context.Context, webhook.Owner, string, int64) (*webhook.Delivery, error),
	answer func(http.ResponseWriter, any) error) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.webhooks()
		if err != nil {
			return err
		}
		id, err := deliveryID(r)
		if err != nil {
			return err
		}
		d, err := act(wh, r.Context(), owner(r), r.PathValue("id"), id)
		if err != nil {
			return err
		}
		return answer(w, d)
	}
}
