package party

import (
	"strings"
	"testing"
)

func TestSecretBox(t *testing.T) {
	t.Parallel()
	sealed, err := newSecretBox("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := newSecretBox("")
	other, _ := newSecretBox("another key")

	for _, tok := range []string{"B-token", "v1:looks-sealed", "plain:looks-plain", strings.Repeat("x", 64)} {
		s := sealed.seal(tok)
		if !strings.HasPrefix(s, sealedPrefix) || strings.Contains(s, tok) {
			t.Errorf("seal(%q) = %q", tok, s)
		}
		if s2 := sealed.seal(tok); s2 == s {
			t.Errorf("seal(%q) twice gave the same text: nonces repeat", tok)
		}
		if got, err := sealed.open(s); err != nil || got != tok {
			t.Errorf("open(seal(%q)) = %q, %v", tok, got, err)
		}
		if _, err := other.open(s); err == nil {
			t.Errorf("another key opened the sealed %q", tok)
		}
		if _, err := plain.open(s); err == nil {
			t.Errorf("no key opened the sealed %q", tok)
		}
		// Without a key: readable, marked plain, never mistaken for sealed.
		p := plain.seal(tok)
		if p != plainPrefix+tok {
			t.Errorf("plain seal(%q) = %q", tok, p)
		}
		for _, box := range []*secretBox{plain, sealed} {
			if got, err := box.open(p); err != nil || got != tok {
				t.Errorf("open(%q) = %q, %v", p, got, err)
			}
		}
	}
	// Tokens stored before the prefixes existed read as they are.
	if got, err := sealed.open("legacy-token"); err != nil || got != "legacy-token" {
		t.Errorf("legacy token: %q, %v", got, err)
	}
	if got := sealed.seal(""); got != "" {
		t.Errorf("seal of nothing = %q", got)
	}
	// A tampered ciphertext does not open.
	s := sealed.seal("B-token")
	tampered := s[:len(s)-2] + "AA"
	if tampered == s {
		tampered = s[:len(s)-2] + "BB"
	}
	if _, err := sealed.open(tampered); err == nil {
		t.Error("a tampered token opened")
	}
}
