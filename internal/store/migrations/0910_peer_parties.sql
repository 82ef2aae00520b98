-- +goose Up
-- peer_parties are the parties another roaming hub (a partner with the HUB
-- role) represents: what its HubClientInfo lists, pushed to us or pulled
-- from its sender. One row per (peer hub, party); two peer hubs listing the
-- same party is a conflict the operator sees (the first to list it keeps
-- it). last_updated is the peer's, created_at ours.
CREATE TABLE peer_parties (
    platform_id  BIGINT NOT NULL REFERENCES platforms (id) ON DELETE CASCADE,
    role         TEXT NOT NULL,
    country_code TEXT NOT NULL,
    party_id     TEXT NOT NULL,
    status       TEXT NOT NULL,
    last_updated BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (platform_id, role, country_code, party_id)
);
CREATE INDEX peer_parties_party ON peer_parties (country_code, party_id);

-- +goose Down
DROP TABLE peer_parties;
