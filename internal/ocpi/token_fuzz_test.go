package ocpi

import (
	"encoding/base64"
	"strings"
	"testing"
)

// FuzzTokenCandidates: accepted headers give one or two non-empty printable
// tokens without whitespace; the raw value is last, and a decoded candidate
// is exactly what the raw value's Base64 says.
func FuzzTokenCandidates(f *testing.F) {
	for _, s := range []string{
		"Token ZXhhbXBsZS10b2tlbgo=", "Token ZXhhbXBsZS10b2tlbg==", "Token example-token", "token dGVzdA==", "Token Cg==",
		"Bearer x", "Token", "Token a b", "  Token  abc  ", "Token \x00", "Token tökén",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		c, err := TokenCandidates(header)
		if err != nil {
			if c != nil {
				t.Fatalf("candidates %q with error %v", c, err)
			}
			return
		}
		if len(c) == 0 || len(c) > 2 {
			t.Fatalf("%q → %d candidates", header, len(c))
		}
		for _, tok := range c {
			if tok == "" {
				t.Fatalf("%q → empty candidate", header)
			}
			for i := 0; i < len(tok); i++ {
				if tok[i] < 0x21 || tok[i] > 0x7e {
					t.Fatalf("%q → candidate %q has byte %#x", header, tok, tok[i])
				}
			}
		}
		raw := c[len(c)-1]
		if !strings.Contains(header, raw) {
			t.Fatalf("%q → raw candidate %q is not in the header", header, raw)
		}
		if len(c) == 2 {
			dec, err := base64.StdEncoding.DecodeString(raw)
			if err != nil || (string(dec) != c[0] && string(dec) != c[0]+"\n") {
				t.Fatalf("%q → decoded candidate %q is not the Base64 of %q", header, c[0], raw)
			}
		}
	})
}
