-- +goose Up
-- parties lists the parties an invitation (token A) was issued for, as JSON
-- [{role, country_code, party_id}]: they are announced as PLANNED in
-- HubClientInfo, and the registration may claim only them. NULL: any party
-- that is not registered yet.
ALTER TABLE invitations ADD COLUMN parties {{json}};

-- +goose Down
ALTER TABLE invitations DROP COLUMN parties;
