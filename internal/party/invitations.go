package party

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Invitation states, as InvitationInfo.State reports them.
const (
	InvitationOpen    = "OPEN"
	InvitationUsed    = "USED"
	InvitationExpired = "EXPIRED"
	InvitationRevoked = "REVOKED"
)

// InvitationInfo is an invitation as the operator sees it later: never its
// token (only a hash is stored).
type InvitationInfo struct {
	ID        int64          `json:"id"`
	Name      string         `json:"name"`
	State     string         `json:"state"`
	Sandbox   bool           `json:"sandbox,omitempty"`
	Parties   []PartyRef     `json:"parties,omitempty"`
	CreatedAt ocpi.DateTime  `json:"created_at"`
	ExpiresAt ocpi.DateTime  `json:"expires_at"`
	UsedAt    *ocpi.DateTime `json:"used_at,omitempty"`
	// RevokedAt is when the operator revoked it (state REVOKED).
	RevokedAt *ocpi.DateTime `json:"revoked_at,omitempty"`
	// PlatformID is the platform the invitation registered, once used.
	PlatformID int64 `json:"platform_id,omitempty"`
}

// Invitations returns the invitations, newest first, at most limit (0: 100).
func (s *Service) Invitations(ctx context.Context, limit int) ([]InvitationInfo, error) {
	if limit <= 0 {
		limit = 100
	}
	return s.invitations(ctx, "ORDER BY id DESC LIMIT $1", limit)
}

// FindInvitation returns invitation id; an unknown id is ENOTFOUND.
func (s *Service) FindInvitation(ctx context.Context, id int64) (*InvitationInfo, error) {
	list, err := s.invitations(ctx, "WHERE id = $1", id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: fmt.Sprintf("no invitation %d", id)}
	}
	return &list[0], nil
}

// invitations reads the invitations that tail (a WHERE or ORDER clause of
// the query, with $1 bound to arg) selects.
func (s *Service) invitations(ctx context.Context, tail string, arg any) ([]InvitationInfo, error) {
	rows, err := s.db.ReadIn(ctx).Query(ctx, `SELECT id, name, sandbox, created_at, expires_at, used_at, platform_id, parties, revoked_at
		FROM invitations `+tail, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	now := s.now()
	var out []InvitationInfo
	for rows.Next() {
		var inv InvitationInfo
		var created, expires int64
		var used, platformID, revoked *int64
		var parties []byte
		if err := rows.Scan(&inv.ID, &inv.Name, &inv.Sandbox, &created, &expires, &used, &platformID, &parties, &revoked); err != nil {
			return nil, err
		}
		inv.CreatedAt, inv.ExpiresAt = ocpi.FromMicros(created), ocpi.FromMicros(expires)
		switch {
		case used != nil:
			inv.State = InvitationUsed
			u := ocpi.FromMicros(*used)
			inv.UsedAt = &u
		case revoked != nil:
			inv.State = InvitationRevoked
			r := ocpi.FromMicros(*revoked)
			inv.RevokedAt = &r
		case now >= expires:
			inv.State = InvitationExpired
		default:
			inv.State = InvitationOpen
		}
		if platformID != nil {
			inv.PlatformID = *platformID
		}
		if len(parties) > 0 {
			if err := json.Unmarshal(parties, &inv.Parties); err != nil {
				return nil, fmt.Errorf("invitation %d parties: %w", inv.ID, err)
			}
		}
		out = append(out, inv)
	}
	return out, rows.Err()
}

// AdminFingerprint identifies the current admin token without revealing it
// (a hash of its hash): the console ties sessions to it, so a new admin
// token signs every browser out.
func (s *Service) AdminFingerprint() string {
	if s.adminHash == "" {
		return ""
	}
	return hashToken("console:" + s.adminHash)[:32]
}
