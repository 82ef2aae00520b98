-- +goose Up
-- contract_id (upper case, a CiString) lets the hub find the token of a
-- session or CDR from an OCPI 2.1.1 or 2.0 CPO: those name only the
-- contract (auth_id), not the token or its owner. Tokens stored before this
-- column existed get it at their next change.
ALTER TABLE tokens ADD COLUMN contract_id TEXT NOT NULL DEFAULT '';
CREATE INDEX tokens_contract ON tokens (contract_id);

-- +goose Down
DROP INDEX tokens_contract;
ALTER TABLE tokens DROP COLUMN contract_id;
