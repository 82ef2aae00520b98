-- +goose Up
-- revoked_at marks an invitation the operator revoked (its token A stopped
-- working then): it is listed as REVOKED, not as EXPIRED.
ALTER TABLE invitations ADD COLUMN revoked_at BIGINT;

-- +goose Down
ALTER TABLE invitations DROP COLUMN revoked_at;
