package core

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// encodingJSON is what marshalNoEscape must write: encoding/json with HTML
// escaping off, without the trailing newline.
func encodingJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// randomString mixes ASCII, the characters encoding/json escapes (quotes,
// backslashes, every control character, U+2028/2029, HTML's <>&), multi-byte
// runes and bytes that are not UTF-8.
func randomString(rng *rand.Rand) string {
	pieces := []string{"a", "Z", "9", " ", `"`, `\`, "/", "<", ">", "&", "é", "€", "𝄞", "\u2028", "\u2029", "\x7f",
		"\xff", "\xc3", "\xed\xa0\x80", "\ufffd", "uid", "E1"}
	var b strings.Builder
	for range rng.IntN(12) {
		if rng.IntN(5) == 0 {
			b.WriteByte(byte(rng.IntN(0x20)))
			continue
		}
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

func randomTree(rng *rand.Rand, depth int) any {
	n := rng.IntN(9)
	if depth > 3 {
		n = rng.IntN(5)
	}
	switch n {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2, 3:
		return randomString(rng)
	case 4:
		nums := []string{"0", "-0", "12", "-3.50", "1e5", "2.5E-3", "12345678901234567890.000001", "", "1.", "01", "+1", "1e", "NaN", "-", "0.0e+0"}
		return json.Number(nums[rng.IntN(len(nums))])
	case 5, 6:
		m := map[string]any{}
		for range rng.IntN(6) {
			m[randomString(rng)] = randomTree(rng, depth+1)
		}
		if rng.IntN(20) == 0 {
			return map[string]any(nil)
		}
		return m
	case 7:
		var l []any
		if rng.IntN(10) > 0 {
			l = []any{}
		}
		for range rng.IntN(5) {
			l = append(l, randomTree(rng, depth+1))
		}
		return l
	default:
		// Values no decoder produces, which callers may still put in an
		// object: encoding/json writes them.
		others := []any{1.5, 7, int64(-2), []string{"a<b"}, map[string]int{"b": 1, "a": 2}, struct {
			X string `json:"x"`
		}{"<&>"}}
		return others[rng.IntN(len(others))]
	}
}

// TestTreeEncodingIsEncodingJSON: marshalNoEscape writes every generic
// tree byte for byte as encoding/json does, and fails where it fails (an
// invalid json.Number), on 50 000 random trees.
func TestTreeEncodingIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 11))
	failed := 0
	for i := range 50_000 {
		v := randomTree(rng, 0)
		want, werr := encodingJSON(v)
		got, gerr := marshalNoEscape(v)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("tree %d %#v: error %v, encoding/json %v", i, v, gerr, werr)
		}
		if werr != nil {
			failed++
			continue
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("tree %d %#v:\n got %q\nwant %q", i, v, got, want)
		}
	}
	if failed == 0 || failed > 40_000 {
		t.Errorf("%d of 50 000 trees failed to encode; the generator should reach both outcomes", failed)
	}
}

// FuzzTreeEncoding: any JSON decoded as the hub decodes bodies is written
// again as encoding/json writes it.
func FuzzTreeEncoding(f *testing.F) {
	for _, s := range []string{`{"a":"<\u2028>","b":[1,2.50,{"c":null}],"é":true}`, `"\ud800"`, `{"x":"\u0000\u001f\u007f"}`, `[1e400]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v any
		if DecodeNumbers(raw, &v) != nil {
			return
		}
		want, werr := encodingJSON(v)
		got, gerr := marshalNoEscape(v)
		if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q (%v), encoding/json %q (%v)", raw, got, gerr, want, werr)
		}
	})
}
