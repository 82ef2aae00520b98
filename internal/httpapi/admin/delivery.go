package admin

import (
	"net/http"

	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/openapi"
)

// deliveryRows show the operator what waits to be delivered.
func (s *handlers) deliveryRows() route.Module {
	return route.Module{
		Tag: openapi.Tag{Name: "delivery", Description: "The hub's delivery of pushes to partners (ocpihub's own API, not an OCPI module): " +
			"what waits, per receiver, as the database holds it."},
		Rows: []route.Row{
			{Pattern: "GET /admin/delivery", Access: route.Admin, Handler: s.handleDeliveryBacklog, Needs: route.NeedHub, Doc: route.Doc{Tag: "delivery",
				Summary: "The delivery backlog: changes not yet fanned out and, per receiver, its open, in-flight and retrying pushes, the age of its oldest and its resync marks (every replica's, furthest behind first)",
				Data:    &hub.Backlog{}}},
		},
	}
}

func (s *handlers) handleDeliveryBacklog(w http.ResponseWriter, r *http.Request) error {
	b, err := s.cfg.Hub.Backlog(r.Context())
	if err != nil {
		return err
	}
	return s.OK(w, b)
}
