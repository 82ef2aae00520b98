package webhook

import (
	"context"
	"fmt"

	"github.com/ocpihub/ocpihub/internal/sealbox"
	"github.com/ocpihub/ocpihub/internal/store"
)

// SealStored prepares the stored signing secrets at start, as the party
// registry does for partner tokens: with a secret key it checks that the key
// opens the secrets already sealed (a wrong key would make every delivery
// fail to sign, so the start fails instead) and seals those stored in clear;
// without a key it fails when sealed secrets exist. It returns how many it
// sealed.
func (s *Service) SealStored(ctx context.Context) (sealed int, err error) {
	type stored struct{ id, secret string }
	var all []stored
	rows, err := s.db.Read().Query(ctx, "SELECT id, secret FROM webhook_subscriptions")
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var st stored
		if err := rows.Scan(&st.id, &st.secret); err != nil {
			rows.Close()
			return 0, err
		}
		all = append(all, st)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, st := range all {
		plain, err := s.cfg.Box.Open(st.secret)
		if err != nil {
			return sealed, fmt.Errorf("webhook subscription %s: %w (is OCPIHUB_SECRET_KEY the key the hub ran with?)", st.id, err)
		}
		if !s.cfg.Box.Encrypted() || sealbox.IsSealed(st.secret) {
			continue
		}
		err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := tx.Exec(ctx, "UPDATE webhook_subscriptions SET secret = $1 WHERE id = $2 AND secret = $3", s.cfg.Box.Seal(plain), st.id, st.secret)
			return err
		})
		if err != nil {
			return sealed, err
		}
		sealed++
	}
	if sealed > 0 {
		if err := s.db.Scrub(ctx, "webhook_subscriptions"); err != nil {
			s.logger.WarnContext(ctx, "could not scrub the secrets replaced by their sealed form", "error", err)
		}
	}
	return sealed, nil
}
