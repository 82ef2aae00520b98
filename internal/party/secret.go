package party

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
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
	if t, ok := c.last[id]; ok && now.Sub(t) < time.Minute && !now.Before(t) {
		return false
	}
	c.last[id] = now
	return true
}
