package upi

import (
	"context"
	"encoding/json"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/tariff"
	"github.com/ocpihub/ocpihub/internal/upi/orders"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
)

// liveCost prices a payment's live session so far with the engine, from
// the connector's tariff: what the status page shows while charging. It is
// false when the session or a tariff the engine can apply is missing.
func (s *Service) liveCost(ctx context.Context, o *orders.Order, p *paymentrow.Payment) (int64, bool) {
	if p.Session.ID == "" {
		return 0, false
	}
	var body []byte
	if err := s.db.Read().QueryRow(ctx, "SELECT body FROM sessions WHERE country_code = $1 AND party_id = $2 AND id = $3",
		p.Session.CountryCode, p.Session.PartyID, ocpi.Key(p.Session.ID)).Scan(&body); err != nil {
		return 0, false
	}
	var sess ocpi.Session
	if err := json.Unmarshal(body, &sess); err != nil || len(sess.ChargingPeriods) == 0 {
		return 0, false
	}
	c, err := s.dir.Connector(ctx, o.Ref())
	if err != nil || c.Tariff == nil {
		return 0, false
	}
	tz := tariff.Zone(c.TimeZone)
	cost, err := tariff.Price(tariff.ForSession(&sess, []ocpi.Tariff{*c.Tariff}, tz, s.now()))
	if err != nil {
		return 0, false
	}
	paise, err := paiseOf(&cost.TotalCost)
	return paise, err == nil
}
