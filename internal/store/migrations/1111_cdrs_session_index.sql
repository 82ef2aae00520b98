-- +goose Up
-- cdrs_session led with country_code, party_id like the CDR's key, and
-- before the table's first ANALYZE PostgreSQL found a CDR by its key
-- through it, filtering every CDR of the CPO by id. Led by session_id it
-- serves the same lookups (all three compared for equality) and no other.
-- On a large table, this rebuild holds writes to cdrs while it runs.
DROP INDEX cdrs_session;
CREATE INDEX cdrs_session ON cdrs (session_id, country_code, party_id);

-- +goose Down
DROP INDEX cdrs_session;
CREATE INDEX cdrs_session ON cdrs (country_code, party_id, session_id);
