package party

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"
)

// hashToken returns the hex SHA-256 of a token: the only form in which
// tokens that partners call us with are stored.
func hashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// equalHash compares two hashes in constant time.
func equalHash(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// newToken returns a random credentials token: 43 URL-safe characters
// (256 bits), inside the 64-character limit of Credentials.token.
func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// secretBox seals the tokens we hold for partners with AES-256-GCM under a key
// derived from the configured secret. Without a secret it stores them as they
// are. Sealed and plain values are told apart by a prefix ("v1:" sealed,
// "plain:" not), so a partner's token that happens to start with "v1:" is
// never mistaken for a sealed one, and setting a key later keeps old tokens
// readable (SealStored seals them at the next start).
type secretBox struct{ aead cipher.AEAD }

const (
	sealedPrefix = "v1:"
	plainPrefix  = "plain:"
)

func newSecretBox(secret string) (*secretBox, error) {
	if secret == "" {
		return &secretBox{}, nil
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
	return &secretBox{aead: aead}, nil
}

// Encrypted reports whether tokens are sealed.
func (b *secretBox) Encrypted() bool { return b.aead != nil }

func (b *secretBox) seal(plain string) string {
	if plain == "" {
		return ""
	}
	if b.aead == nil {
		return plainPrefix + plain
	}
	nonce := make([]byte, b.aead.NonceSize())
	_, _ = rand.Read(nonce)
	ct := b.aead.Seal(nonce, nonce, []byte(plain), []byte("ocpihub"))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(ct)
}

func (b *secretBox) open(stored string) (string, error) {
	if rest, ok := strings.CutPrefix(stored, plainPrefix); ok {
		return rest, nil
	}
	rest, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		return stored, nil // written before the prefixes existed
	}
	if b.aead == nil {
		return "", errors.New("the token is encrypted but no secret key is configured")
	}
	ct, err := base64.RawStdEncoding.DecodeString(rest)
	if err != nil || len(ct) < b.aead.NonceSize() {
		return "", errors.New("malformed encrypted token")
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, ct[:n], ct[n:], []byte("ocpihub"))
	if err != nil {
		return "", errors.New("the token cannot be decrypted with the configured secret key")
	}
	return string(plain), nil
}

// touchCache remembers when each platform's last_seen_at was last written.
type touchCache struct {
	mu   sync.Mutex
	last map[int64]time.Time
}

func newTouchCache() *touchCache { return &touchCache{last: map[int64]time.Time{}} }

// due reports whether a write is due for id at now, and records it.
func (c *touchCache) due(id int64, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.last[id]; ok && now.Sub(t) < time.Minute && now.After(t) {
		return false
	}
	c.last[id] = now
	return true
}
