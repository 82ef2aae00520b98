-- +goose Up
-- fields says what a push rewrites at its path, so that a receiver that is
-- behind can be sent the latest of several pushes of the same thing instead
-- of each in turn: '*' for a PUT (everything at the path), the sorted
-- top-level keys of a PATCH whose fields simply replace the receiver's
-- ('last_updated,status'), and '' for a push that is never dropped (a POST,
-- a DELETE, a PATCH that appends, as a Session's charging_periods does).
ALTER TABLE hub_push ADD COLUMN fields TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE hub_push DROP COLUMN fields;
