-- +goose Up
-- Signing secrets are stored in the sealbox form from now on: sealed
-- ("v1:…") when the hub has a secret key, marked plain ("plain:…")
-- otherwise. Those stored before were in clear; mark them so that none is
-- ever mistaken for a sealed one. The hub seals them at its next start
-- when a key is configured.
UPDATE webhook_subscriptions SET secret = 'plain:' || secret WHERE secret <> '';

-- +goose Down
-- Secrets sealed since cannot be opened in SQL: they stay sealed and an
-- older hub cannot sign with them (set them again through the API).
UPDATE webhook_subscriptions SET secret = substr(secret, 7) WHERE secret LIKE 'plain:%';
