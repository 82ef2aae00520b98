-- +goose Up
-- Pushes that are not broadcasts name their addressee and sender: a session
-- goes to the eMSP owning its token (OCPI-to) from the CPO that sent it
-- (OCPI-from). Empty values keep the broadcast defaults (the receiving
-- platform's party in the audience, from the hub). iface is the receiving
-- interface role: RECEIVER, or SENDER for the ActiveChargingProfile updates
-- a CPO sends to the party that set a profile.
ALTER TABLE hub_push ADD COLUMN to_country_code TEXT NOT NULL DEFAULT '';
ALTER TABLE hub_push ADD COLUMN to_party_id TEXT NOT NULL DEFAULT '';
ALTER TABLE hub_push ADD COLUMN from_country_code TEXT NOT NULL DEFAULT '';
ALTER TABLE hub_push ADD COLUMN from_party_id TEXT NOT NULL DEFAULT '';
ALTER TABLE hub_push ADD COLUMN iface TEXT NOT NULL DEFAULT 'RECEIVER';

-- +goose Down
ALTER TABLE hub_push DROP COLUMN iface;
ALTER TABLE hub_push DROP COLUMN from_party_id;
ALTER TABLE hub_push DROP COLUMN from_country_code;
ALTER TABLE hub_push DROP COLUMN to_party_id;
ALTER TABLE hub_push DROP COLUMN to_country_code;
