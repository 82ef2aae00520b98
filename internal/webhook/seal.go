package webhook

import (
	"context"
)

// SealStored prepares the stored signing secrets at start, as the party
// registry does for partner tokens: with a secret key it checks that the key
// opens the secrets already sealed (a wrong key would make every delivery
// fail to sign, so the start fails instead) and seals those stored in clear;
// without a key it fails when sealed secrets exist. It returns how many it
// sealed.
func (s *Service) SealStored(ctx context.Context) (sealed int, err error) {
	sealed, err = s.cfg.Box.SealColumn(ctx, s.db, "webhook_subscriptions", "id", "secret", "webhook subscription")
	if err == nil && sealed > 0 {
		if err := s.db.Scrub(ctx, "webhook_subscriptions"); err != nil {
			s.logger.WarnContext(ctx, "could not scrub the secrets replaced by their sealed form", "error", err)
		}
	}
	return sealed, err
}
