package ocpi

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTokenCandidates reads Base64 (2.2.1) and raw (2.1.1, many 2.2 peers)
// tokens from an Authorization header, most likely first.
func TestTokenCandidates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		header string
		want   []string // nil: ErrNoToken
	}{
		{"base64 of a token", "Token ZXhhbXBsZS10b2tlbg==", []string{"example-token", "ZXhhbXBsZS10b2tlbg=="}},
		// transport.md §9.1: the spec's example encodes a trailing newline.
		{"spec example with trailing newline", "Token ZXhhbXBsZS10b2tlbgo=", []string{"example-token", "ZXhhbXBsZS10b2tlbgo="}},
		{"raw uuid token", "Token ebf3b399-779f-4497-9b9d-ac6ad3cc44d2", []string{"ebf3b399-779f-4497-9b9d-ac6ad3cc44d2"}},
		// A raw token that happens to be valid Base64 of binary bytes: only raw.
		{"raw token that decodes to binary", "Token abcdabcd", []string{"abcdabcd"}},
		// A raw token that is valid Base64 of printable text: both, decoded first;
		// authentication tries both, so either owner is found.
		{"raw token that decodes to text", "Token dGVzdA==", []string{"test", "dGVzdA=="}},
		{"base64 of a token with symbols", "Token IX4mKigpX3s/fQ==", []string{"!~&*()_{?}", "IX4mKigpX3s/fQ=="}},
		{"scheme is case-insensitive", "token ZXhhbXBsZS10b2tlbg==", []string{"example-token", "ZXhhbXBsZS10b2tlbg=="}},
		{"surrounding spaces", "  Token   abc123  ", []string{"abc123"}},
		// Decoded text with inner whitespace or a second newline is not a token.
		{"base64 of text with a space", "Token YSBi", []string{"YSBi"}},
		{"base64 of two newlines", "Token YWJjCgo=", []string{"YWJjCgo="}},
		{"base64 of a lone newline", "Token Cg==", []string{"Cg=="}},
		{"unpadded base64 is raw only", "Token ZXhhbXBsZS10b2tlbg", []string{"ZXhhbXBsZS10b2tlbg"}},

		{"missing", "", nil},
		{"scheme only", "Token", nil},
		{"scheme and space", "Token ", nil},
		{"bearer", "Bearer ZXhhbXBsZS10b2tlbg==", nil},
		{"basic", "Basic dXNlcjpwYXNz", nil},
		{"no scheme", "ZXhhbXBsZS10b2tlbg==", nil},
		{"two words", "Token abc def", nil},
		{"tab separator", "Token\tabc", nil},
		{"non-ASCII", "Token tökén", nil},
		{"control character", "Token abc\x00", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := TokenCandidates(tt.header)
			if tt.want == nil {
				if !errors.Is(err, ErrNoToken) {
					t.Fatalf("TokenCandidates(%q) = %q, %v; want ErrNoToken", tt.header, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("TokenCandidates(%q): %v", tt.header, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestEncodeToken writes what TokenCandidates reads back first, without the
// spec example's newline.
func TestEncodeToken(t *testing.T) {
	t.Parallel()
	if got := EncodeToken("example-token", true); got != "Token ZXhhbXBsZS10b2tlbg==" {
		t.Errorf("Base64: %s", got)
	}
	if got := EncodeToken("example-token", false); got != "Token example-token" {
		t.Errorf("raw: %s", got)
	}
	for _, tok := range []string{"example-token", "a", strings.Repeat("Z", 64), "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"} {
		for _, b64 := range []bool{true, false} {
			c, err := TokenCandidates(EncodeToken(tok, b64))
			if err != nil || c[0] != tok && (len(c) < 2 || c[1] != tok) {
				t.Errorf("round trip of %q (base64 %v): %q, %v", tok, b64, c, err)
			}
			if b64 && c[0] != tok {
				t.Errorf("the decoded form of %q is not first: %q", tok, c)
			}
		}
	}
}

// TestValidToken is the credentials token rule: 1 to 64 printable ASCII
// characters without whitespace.
func TestValidToken(t *testing.T) {
	t.Parallel()
	for tok, want := range map[string]bool{
		"a": true, strings.Repeat("a", 64): true, "~!": true,
		"": false, strings.Repeat("a", 65): false, "a b": false, "a\n": false, "é": false,
	} {
		if ValidToken(tok) != want {
			t.Errorf("ValidToken(%q) != %v", tok, want)
		}
	}
}
