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
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
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
