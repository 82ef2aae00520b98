package party

import (
	"context"

	"github.com/ocpihub/ocpihub/internal/party/health"
	"github.com/ocpihub/ocpihub/internal/store"
)

// The receivers' delivery health (package health): the names the hub's
// delivery still uses from party (everything else names package health).
type DeliveryOutcome = health.DeliveryOutcome

// Health states (see package health).
const (
	HealthOK       = health.HealthOK
	HealthDegraded = health.HealthDegraded
)

// describe names a platform and its parties for the health events.
func describe(ctx context.Context, tx *store.Tx, platformID int64) (name string, parties any, err error) {
	p, err := findPlatform(ctx, tx, platformID)
	if err != nil {
		return "", nil, err
	}
	return p.Name, p.Refs(), nil
}

// AttachHealth sets the Health of each platform of ps.
func (s *Service) AttachHealth(ctx context.Context, ps ...*Platform) error {
	hs, err := s.Health(ctx)
	if err != nil {
		return err
	}
	for _, p := range ps {
		p.Health = hs[p.ID]
	}
	return nil
}
