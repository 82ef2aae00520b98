// Package sealbox seals the secrets the hub must keep in a form it can read
// back — the tokens it calls partners with, the signing secrets of webhook
// subscriptions — with AES-256-GCM under a key derived from the configured
// secret key (OCPIHUB_SECRET_KEY). Without a key it stores them as they are,
// and the hub warns at start.
//
// Sealed and plain values are told apart by a prefix ("v1:" sealed, "plain:"
// not), so a secret that happens to start with "v1:" is never mistaken for a
// sealed one, and configuring a key later keeps old values readable: the
// owners seal them at the next start. A value with neither prefix was
// written before the prefixes existed and reads as it is.
package sealbox

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/ocpihub/ocpihub/internal/store"
)

const (
	sealedPrefix = "v1:"
	plainPrefix  = "plain:"
)

// Box seals and opens secrets. The zero Box (and a nil one) has no key: it
// marks values plain.
type Box struct{ aead cipher.AEAD }

// New returns a Box keyed by secret; an empty secret gives a Box without a
// key.
func New(secret string) (*Box, error) {
	if secret == "" {
		return &Box{}, nil
	}
	key := sha256.Sum256([]byte("ocpihub token key\x00" + secret))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Encrypted reports whether the Box seals (has a key).
func (b *Box) Encrypted() bool { return b != nil && b.aead != nil }

// IsSealed reports whether a stored value is in the sealed form.
func IsSealed(stored string) bool { return strings.HasPrefix(stored, sealedPrefix) }

// Seal returns the stored form of plain: sealed with a fresh nonce when the
// Box has a key, marked plain otherwise. The empty string stays empty.
func (b *Box) Seal(plain string) string {
	if plain == "" {
		return ""
	}
	if !b.Encrypted() {
		return plainPrefix + plain
	}
	nonce := make([]byte, b.aead.NonceSize())
	_, _ = rand.Read(nonce)
	ct := b.aead.Seal(nonce, nonce, []byte(plain), []byte("ocpihub"))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(ct)
}

// Open returns the secret a stored value holds. A sealed value needs the key
// it was sealed with.
func (b *Box) Open(stored string) (string, error) {
	if rest, ok := strings.CutPrefix(stored, plainPrefix); ok {
		return rest, nil
	}
	rest, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		return stored, nil // written before the prefixes existed
	}
	if !b.Encrypted() {
		return "", errors.New("the secret is encrypted but no secret key is configured")
	}
	ct, err := base64.RawStdEncoding.DecodeString(rest)
	if err != nil || len(ct) < b.aead.NonceSize() {
		return "", errors.New("malformed encrypted secret")
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, ct[:n], ct[n:], []byte("ocpihub"))
	if err != nil {
		return "", errors.New("the secret cannot be decrypted with the configured secret key")
	}
	return string(plain), nil
}

// SealColumn prepares a column of stored secrets at start (table.column,
// its rows named by key, what names a row in errors). With a key it checks
// that the key opens the values already sealed — a wrong key would break
// every later use of them silently, so the start fails instead — and seals
// those stored in clear, e.g. before the key was configured. Without a key it
// fails when sealed values exist. It returns how many values it sealed; the
// caller then scrubs the table (store.DB.Scrub) so that the clear values do
// not survive on disk. table, key and column are the caller's constants,
// never input.
func (b *Box) SealColumn(ctx context.Context, db *store.DB, table, key, column, what string) (sealed int, err error) {
	type stored struct{ key, value string }
	rows, err := db.Read().Query(ctx, "SELECT CAST("+key+" AS TEXT), "+column+" FROM "+table+" WHERE "+column+" <> ''")
	if err != nil {
		return 0, err
	}
	all, err := store.Collect(rows, func(r store.Row) (st stored, err error) {
		return st, r.Scan(&st.key, &st.value)
	})
	if err != nil {
		return 0, err
	}
	for _, st := range all {
		plain, err := b.Open(st.value)
		if err != nil {
			return sealed, fmt.Errorf("%s %s: %w (is OCPIHUB_SECRET_KEY the key the hub ran with?)", what, st.key, err)
		}
		if !b.Encrypted() || IsSealed(st.value) {
			continue
		}
		err = db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := tx.Exec(ctx, "UPDATE "+table+" SET "+column+" = $1 WHERE CAST("+key+" AS TEXT) = $2 AND "+column+" = $3",
				b.Seal(plain), st.key, st.value)
			return err
		})
		if err != nil {
			return sealed, err
		}
		sealed++
	}
	return sealed, nil
}
