package ocpi

import (
	"encoding/base64"
	"errors"
	"strings"
)

// ErrNoToken is returned for a missing or malformed Authorization header.
var ErrNoToken = errors.New(`missing or malformed Authorization header (want "Token <credentials token>")`)

// TokenCandidates parses an Authorization header and returns the tokens it may
// carry, most likely first: the Base64-decoded form (2.2.1) and the raw form
// (2.1.1, 2.0 and many 2.2 peers). transport.md §9.1: the spec's own examples
// encode a trailing newline, so one trailing "\n" after decoding is dropped;
// tokens are printable ASCII without spaces, so this cannot hide a real
// character.
func TokenCandidates(header string) ([]string, error) {
	scheme, value, ok := strings.Cut(strings.TrimSpace(header), " ")
	value = strings.TrimSpace(value)
	if !ok || !strings.EqualFold(scheme, "Token") || value == "" || !printableToken(value) {
		return nil, ErrNoToken
	}
	out := make([]string, 0, 2)
	if b, err := base64.StdEncoding.DecodeString(value); err == nil {
		s := strings.TrimSuffix(string(b), "\n")
		if s != "" && printableToken(s) {
			out = append(out, s)
		}
	}
	return append(out, value), nil
}

// EncodeToken returns the Authorization header value for a token: Base64 for
// 2.2.1 partners, raw for legacy ones.
func EncodeToken(token string, base64Encoded bool) string {
	if base64Encoded {
		return "Token " + base64.StdEncoding.EncodeToString([]byte(token))
	}
	return "Token " + token
}

// printableToken reports whether s is a valid credentials token: printable
// ASCII without whitespace (U+0021..U+007E).
func printableToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// ValidToken reports whether s may be used as a credentials token: 1 to 64
// printable ASCII characters without whitespace (credentials.md §1).
func ValidToken(s string) bool { return s != "" && len(s) <= 64 && printableToken(s) }
