package printout

import (
	"bytes"
	"encoding/hex"
	"errors"
	"image"
	"image/color"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/ledongthuc/pdf"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"golang.org/x/image/font/sfnt"
)

// invalidCase is an edit of a valid sample that rendering must refuse.
type invalidCase[T any] struct {
	name   string
	change func(*T)
}

// wantInvalid renders each case's edit of a fresh sample and fails the test
// unless rendering refuses it with ErrInvalid.
func wantInvalid[T any](t *testing.T, sample func() T, render func(T) ([]byte, error), cases []invalidCase[T]) {
	t.Helper()
	for _, tt := range cases {
		v := sample()
		tt.change(&v)
		if _, err := render(v); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error = %v, want ErrInvalid", tt.name, err)
		}
	}
}

// renderPage renders v and parses the one-page PDF.
func renderPage[T any](t *testing.T, render func(T) ([]byte, error), v T) parsed {
	t.Helper()
	data, err := render(v)
	if err != nil {
		t.Fatal(err)
	}
	return parsePDF(t, data)
}

// parsed is a one-page PDF read back by an independent parser.
type parsed struct {
	page  pdf.Page
	lines []string          // the page's non-empty lines of text, in content order
	shown map[string]string // text shown in each font, by base font name
}

// has reports whether line is one of the page's lines.
func (p parsed) has(line string) bool { return slices.Contains(p.lines, line) }

// after returns the line that follows the first line equal to label (the
// value of a label/value row), or "" when there is none.
func (p parsed) after(label string) string {
	i := slices.Index(p.lines, label)
	if i < 0 || i+1 == len(p.lines) {
		return ""
	}
	return p.lines[i+1]
}

func parsePDF(t *testing.T, data []byte) parsed {
	t.Helper()
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		t.Fatalf("not a PDF: starts %q", data[:min(len(data), 16)])
	}
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("parse PDF: %v", err)
	}
	if n := r.NumPage(); n != 1 {
		t.Fatalf("PDF has %d pages, want 1", n)
	}
	p := r.Page(1)
	text, shown := pageText(t, p)
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return parsed{page: p, lines: lines, shown: shown}
}

// pageText returns the text the page shows, one line per text object (fpdf
// writes one per cell), and the text shown in each font, by applying each font's ToUnicode CMap to the
// strings shown by the Tj, TJ, ' and " operators.
//
// The parser's own text decoding is not used: it adds a bfrange offset to
// the last byte of the destination only, so with the identity range that
// fpdf writes (<0000> <FFFF> <0000>) it reads ₹ (U+20B9) as ¹ (U+00B9).
func pageText(t *testing.T, p pdf.Page) (string, map[string]string) {
	t.Helper()
	fonts := p.Resources().Key("Font")
	maps := map[string]toUnicode{}
	shown := map[string]string{}
	var cur toUnicode
	var curName string
	var b strings.Builder
	show := func(v pdf.Value) {
		if cur == nil {
			t.Fatal("text shown before a font is set")
		}
		s := cur.decode(t, v.RawString())
		b.WriteString(s)
		shown[curName] += s
	}
	pdf.Interpret(p.V.Key("Contents"), func(stk *pdf.Stack, op string) {
		n := stk.Len()
		args := make([]pdf.Value, n)
		for i := n - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "Tf":
			name := args[0].Name()
			if _, ok := maps[name]; !ok {
				maps[name] = readToUnicode(t, fonts.Key(name).Key("ToUnicode"))
			}
			cur, curName = maps[name], fonts.Key(name).Key("BaseFont").Name()
		case "Tj", "'":
			show(args[0])
		case "\"":
			show(args[2])
		case "TJ":
			for i := 0; i < args[0].Len(); i++ {
				if v := args[0].Index(i); v.Kind() == pdf.String {
					show(v)
				}
			}
		case "ET":
			b.WriteString("\n")
		}
	})
	return b.String(), shown
}

// toUnicode maps 2-byte character codes (Identity-H) to text.
type toUnicode map[uint16][]rune

var (
	cmapBlock = regexp.MustCompile(`(?s)begin(bfchar|bfrange)(.*?)endbf`)
	cmapEntry = regexp.MustCompile(`<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>(?:\s*(<[0-9A-Fa-f]+>|\[[^\]]*\]))?`)
	cmapHex   = regexp.MustCompile(`<([0-9A-Fa-f]+)>`)
)

// readToUnicode reads the bfchar and bfrange entries of a ToUnicode CMap
// with 2-byte source codes.
func readToUnicode(t *testing.T, cmap pdf.Value) toUnicode {
	t.Helper()
	if cmap.IsNull() {
		t.Fatal("font has no ToUnicode CMap: its text cannot be extracted")
	}
	rc := cmap.Reader()
	text, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatalf("read ToUnicode CMap: %v", err)
	}
	hexBytes := func(h string) string {
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatalf("CMap hex string %q: %v", h, err)
		}
		return string(b)
	}
	code := func(h string) uint32 {
		c, err := strconv.ParseUint(h, 16, 16)
		if err != nil || len(h) != 4 {
			t.Fatalf("CMap code <%s> is not 2 bytes", h)
		}
		return uint32(c)
	}
	m := toUnicode{}
	for _, block := range cmapBlock.FindAllStringSubmatch(string(text), -1) {
		for _, e := range cmapEntry.FindAllStringSubmatch(block[2], -1) {
			if block[1] == "bfchar" {
				m[uint16(code(e[1]))] = utf16BE(hexBytes(e[2]))
				continue
			}
			lo, hi := code(e[1]), code(e[2])
			if strings.HasPrefix(e[3], "[") {
				for i, d := range cmapHex.FindAllStringSubmatch(e[3], -1) {
					m[uint16(lo+uint32(i))] = utf16BE(hexBytes(d[1]))
				}
				continue
			}
			// The destination is incremented as a whole code point.
			base := utf16BE(hexBytes(strings.Trim(e[3], "<>")))
			if len(base) != 1 {
				t.Fatalf("bfrange destination %q is not one character", string(base))
			}
			for c := lo; c <= hi; c++ {
				m[uint16(c)] = []rune{base[0] + rune(c-lo)}
			}
		}
	}
	if len(m) == 0 {
		t.Fatalf("ToUnicode CMap maps nothing:\n%s", text)
	}
	return m
}

func (m toUnicode) decode(t *testing.T, s string) string {
	t.Helper()
	if len(s)%2 != 0 {
		t.Fatalf("string %x is not a sequence of 2-byte codes", s)
	}
	var out []rune
	for i := 0; i < len(s); i += 2 {
		r, ok := m[uint16(s[i])<<8|uint16(s[i+1])]
		if !ok {
			t.Fatalf("code %x has no Unicode mapping", s[i:i+2])
		}
		out = append(out, r...)
	}
	return string(out)
}

func utf16BE(s string) []rune {
	u := make([]uint16, len(s)/2)
	for i := range u {
		u[i] = uint16(s[2*i])<<8 | uint16(s[2*i+1])
	}
	return utf16.Decode(u)
}

// sizeMM is the page's MediaBox in millimetres, rounded to 0.1 mm.
func (p parsed) sizeMM() (w, h float64) {
	var box pdf.Value
	for v := p.page.V; !v.IsNull() && box.IsNull(); v = v.Key("Parent") {
		box = v.Key("MediaBox")
	}
	mm := func(pt float64) float64 { return math.Round(pt/72*25.4*10) / 10 }
	return mm(box.Index(2).Float64() - box.Index(0).Float64()), mm(box.Index(3).Float64() - box.Index(1).Float64())
}

// embeddedFonts returns, for every font the page uses, its base name and the
// TrueType program embedded for it (FontFile2), parsed; a font without an
// embedded program fails the test.
func (p parsed) embeddedFonts(t *testing.T) map[string]*sfnt.Font {
	t.Helper()
	fonts := p.page.Resources().Key("Font")
	out := map[string]*sfnt.Font{}
	for _, k := range fonts.Keys() {
		f := fonts.Key(k)
		desc := f.Key("FontDescriptor")
		if f.Key("Subtype").Name() == "Type0" {
			desc = f.Key("DescendantFonts").Index(0).Key("FontDescriptor")
		}
		file := desc.Key("FontFile2")
		if file.IsNull() {
			t.Fatalf("font %s (%s) has no embedded FontFile2 program", k, f.Key("BaseFont").Name())
		}
		rc := file.Reader()
		prog, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("read font program of %s: %v", k, err)
		}
		sf, err := sfnt.Parse(prog)
		if err != nil {
			t.Fatalf("embedded font of %s is not a TrueType program: %v", k, err)
		}
		out[f.Key("BaseFont").Name()] = sf
	}
	return out
}

// qrImage rasterises the filled rectangles drawn on the page (the sticker
// draws no others) into a white image with a margin, 8 pixels per point.
func (p parsed) qrImage(t *testing.T) image.Image {
	t.Helper()
	rects := p.page.Content().Rect
	if len(rects) == 0 {
		t.Fatal("the page draws no rectangles")
	}
	const scale, margin = 8.0, 40
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	norm := make([][4]float64, len(rects))
	for i, r := range rects {
		x0, x1 := math.Min(r.Min.X, r.Max.X), math.Max(r.Min.X, r.Max.X)
		y0, y1 := math.Min(r.Min.Y, r.Max.Y), math.Max(r.Min.Y, r.Max.Y)
		norm[i] = [4]float64{x0, y0, x1, y1}
		minX, minY, maxX, maxY = math.Min(minX, x0), math.Min(minY, y0), math.Max(maxX, x1), math.Max(maxY, y1)
	}
	w := int((maxX-minX)*scale) + 2*margin
	h := int((maxY-minY)*scale) + 2*margin
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for _, r := range norm {
		// PDF y grows upwards; image y grows downwards.
		px0 := margin + int(math.Round((r[0]-minX)*scale))
		px1 := margin + int(math.Round((r[2]-minX)*scale))
		py0 := margin + int(math.Round((maxY-r[3])*scale))
		py1 := margin + int(math.Round((maxY-r[1])*scale))
		for y := py0; y < py1; y++ {
			for x := px0; x < px1; x++ {
				img.SetGray(x, y, color.Gray{})
			}
		}
	}
	return img
}

// decodeQR reads a QR code from an image with an independent decoder, the
// way a phone camera would: locating the finder patterns, not assuming a
// pure code.
func decodeQR(t *testing.T, img image.Image) string {
	t.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatalf("binarise: %v", err)
	}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_TRY_HARDER: true})
	if err != nil {
		t.Fatalf("decode QR: %v", err)
	}
	return res.GetText()
}

// assertGlyphs checks that every character the page shows in each font has
// a glyph in the program embedded for it (no blank boxes), that every font
// is embedded, and that the ₹ sign is among them.
func (p parsed) assertGlyphs(t *testing.T) {
	t.Helper()
	fonts := p.embeddedFonts(t)
	rupee := false
	for name, text := range p.shown {
		f, ok := fonts[name]
		if !ok {
			t.Errorf("text shown in font %s, which is not embedded", name)
			continue
		}
		var b sfnt.Buffer
		for _, r := range text {
			if i, err := f.GlyphIndex(&b, r); err != nil || i == 0 {
				t.Errorf("embedded font %s has no glyph for %q (U+%04X)", name, r, r)
			}
		}
		rupee = rupee || strings.ContainsRune(text, '₹')
	}
	if !rupee {
		t.Error("the page shows no ₹ sign")
	}
}
