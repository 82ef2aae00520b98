-- +goose Up
-- Commands (START_SESSION, RESERVE_NOW, UNLOCK_CONNECTOR) name a location by
-- its id alone; finding its CPO must not scan the directory.
CREATE INDEX IF NOT EXISTS locations_id ON locations (id);

-- +goose Down
DROP INDEX IF EXISTS locations_id;
