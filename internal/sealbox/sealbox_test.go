package sealbox

import (
	"strings"
	"testing"
)

func TestBox(t *testing.T) {
	t.Parallel()
	sealed, err := New("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := New("")
	other, _ := New("another key")

	for _, tok := range []string{"B-token", "v1:looks-sealed", "plain:looks-plain", strings.Repeat("x", 64)} {
		s := sealed.Seal(tok)
		if !strings.HasPrefix(s, sealedPrefix) || strings.Contains(s, tok) {
			t.Errorf("seal(%q) = %q", tok, s)
		}
		if s2 := sealed.Seal(tok); s2 == s {
			t.Errorf("seal(%q) twice gave the same text: nonces repeat", tok)
		}
		if got, err := sealed.Open(s); err != nil || got != tok {
			t.Errorf("open(seal(%q)) = %q, %v", tok, got, err)
		}
		if _, err := other.Open(s); err == nil {
			t.Errorf("another key opened the sealed %q", tok)
		}
		if _, err := plain.Open(s); err == nil {
			t.Errorf("no key opened the sealed %q", tok)
		}
		// Without a key: readable, marked plain, never mistaken for sealed.
		p := plain.Seal(tok)
		if p != plainPrefix+tok {
			t.Errorf("plain seal(%q) = %q", tok, p)
		}
		for _, box := range []*Box{plain, sealed} {
			if got, err := box.Open(p); err != nil || got != tok {
				t.Errorf("open(%q) = %q, %v", p, got, err)
			}
		}
	}
	// Tokens stored before the prefixes existed read as they are.
	if got, err := sealed.Open("legacy-token"); err != nil || got != "legacy-token" {
		t.Errorf("legacy token: %q, %v", got, err)
	}
	if got := sealed.Seal(""); got != "" {
		t.Errorf("seal of nothing = %q", got)
	}
	// A tampered ciphertext does not open.
	s := sealed.Seal("B-token")
	tampered := s[:len(s)-2] + "AA"
	if tampered == s {
		tampered = s[:len(s)-2] + "BB"
	}
	if _, err := sealed.Open(tampered); err == nil {
		t.Error("a tampered token opened")
	}
}
