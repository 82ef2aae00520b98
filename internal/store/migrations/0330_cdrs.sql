-- +goose Up
-- cdrs are the CDRs CPOs post through the hub: immutable, keyed by the
-- CPO's (country_code, party_id, id). body_hash is the SHA-256 of the
-- canonical body: a repeated POST of the same CDR is recognised by it.
CREATE TABLE cdrs (
    pk                      {{id}},
    country_code            TEXT NOT NULL,
    party_id                TEXT NOT NULL,
    id                      TEXT NOT NULL,
    token_country_code      TEXT NOT NULL,
    token_party_id          TEXT NOT NULL,
    session_id              TEXT NOT NULL DEFAULT '',
    -- session_known is true when the hub holds the CDR's session (same CPO,
    -- session_id): the two are linked.
    session_known           BOOLEAN NOT NULL DEFAULT FALSE,
    authorization_reference TEXT NOT NULL DEFAULT '',
    credit                  BOOLEAN NOT NULL DEFAULT FALSE,
    credit_reference_id     TEXT NOT NULL DEFAULT '',
    body_hash               TEXT NOT NULL,
    -- cost_check compares total_cost with the linked session's: '' (no
    -- session or no session cost), match, mismatch.
    cost_check              TEXT NOT NULL DEFAULT '',
    -- emsp_location is the URL the owning eMSP answered with (Location).
    emsp_location           TEXT NOT NULL DEFAULT '',
    created_at              BIGINT NOT NULL,
    last_updated            BIGINT NOT NULL,
    body                    {{json}} NOT NULL,
    UNIQUE (country_code, party_id, id)
);
CREATE INDEX cdrs_page ON cdrs (last_updated, pk);
CREATE INDEX cdrs_emsp_page ON cdrs (token_country_code, token_party_id, last_updated, pk);
CREATE INDEX cdrs_authorization_reference ON cdrs (authorization_reference);
CREATE INDEX cdrs_session ON cdrs (country_code, party_id, session_id);

-- +goose Down
DROP TABLE cdrs;
