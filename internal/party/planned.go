package party

import (
	"context"
	"fmt"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Planned parties (party/clientinfo/planned.go) are withdrawn when the last
// invitation naming them closes; revoking one closes it at once.

// RevokeInvitation closes an open invitation at once: its token A stops
// working and the parties it alone planned are withdrawn. A revoked
// invitation is listed as REVOKED.
func (s *Service) RevokeInvitation(ctx context.Context, id int64) error {
	var withdrawn []PartyRef
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		now := s.now()
		n, err := tx.Exec(ctx, "UPDATE invitations SET expires_at = $1, revoked_at = $1 WHERE id = $2 AND used_at IS NULL AND expires_at > $1", now, id)
		if err != nil {
			return err
		}
		if n == 0 {
			return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: fmt.Sprintf("no open invitation %d: it was used, has expired or does not exist", id)}
		}
		withdrawn, err = s.Book.WithdrawPlannedTx(ctx, tx)
		return err
	})
	if err != nil {
		return err
	}
	s.logger.InfoContext(ctx, "invitation revoked", "invitation_id", id)
	s.Book.LogWithdrawn(ctx, withdrawn)
	return nil
}
