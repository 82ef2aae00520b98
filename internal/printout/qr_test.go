package printout

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"strconv"
	"strings"
	"testing"
)

var qrContents = []string{
	"https://hub.example/qr/AB12CD34",
	"https://charge.ocpihub.example.in/qr/q_01HZX3K9M2T7R8V6W5Y4N1P0QS",
	"HTTPS://HUB.EXAMPLE/QR/AB12CD34", // alphanumeric mode
	"https://hub.example/qr/" + strings.Repeat("x", 200),
}

func TestQRPNGDecodes(t *testing.T) {
	t.Parallel()
	for _, content := range qrContents {
		for _, size := range []int{0, 333, 1000} {
			m, err := encode(content)
			if err != nil {
				t.Fatal(err)
			}
			if size == 0 {
				size = 2 * (m.n + 2*quietZone) // two pixels a module, the smallest that decodes reliably
			}
			data, err := QRPNG(content, size)
			if err != nil {
				t.Fatalf("QRPNG(%q, %d): %v", content, size, err)
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("QRPNG(%q, %d) is not a PNG: %v", content, size, err)
			}
			if b := img.Bounds(); b.Dx() != size || b.Dy() != size {
				t.Errorf("QRPNG(%q, %d) is %v", content, size, b)
			}
			if p, ok := img.ColorModel().(color.Palette); !ok || len(p) != 2 {
				t.Errorf("QRPNG(%q, %d): colour model %T, want a two-colour palette", content, size, img.ColorModel())
			}
			if got := decodeQR(t, img); got != content {
				t.Errorf("QRPNG(%q, %d) decodes to %q", content, size, got)
			}
			assertQuietZone(t, img, m.n, size)
		}
	}
}

// assertQuietZone checks that at least four modules' worth of white (what
// ISO/IEC 18004 asks for) surround the dark modules.
func assertQuietZone(t *testing.T, img image.Image, n, size int) {
	t.Helper()
	b := img.Bounds()
	minX, minY, maxX, maxY := b.Max.X, b.Max.Y, -1, -1
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, _, _, _ := img.At(x, y).RGBA(); r < 0x8000 {
				minX, minY, maxX, maxY = min(minX, x), min(minY, y), max(maxX, x), max(maxY, y)
			}
		}
	}
	scale := size / (n + 2*quietZone)
	if maxX-minX+1 != n*scale || maxY-minY+1 != n*scale {
		t.Errorf("dark area is %d×%d px, want %d modules of %d px", maxX-minX+1, maxY-minY+1, n, scale)
	}
	if margin := min(minX, minY, size-1-maxX, size-1-maxY); margin < 4*scale {
		t.Errorf("quiet zone is %d px, want at least %d", margin, 4*scale)
	}
}

func TestQRSVGDecodes(t *testing.T) {
	t.Parallel()
	for _, content := range qrContents {
		data, err := QRSVG(content)
		if err != nil {
			t.Fatalf("QRSVG(%q): %v", content, err)
		}
		img := rasteriseSVG(t, data, 6)
		if got := decodeQR(t, img); got != content {
			t.Errorf("QRSVG(%q) decodes to %q", content, got)
		}
	}
}

// svgDoc is the part of our SVG the test reads: the viewBox, the shapes.
type svgDoc struct {
	ViewBox string `xml:"viewBox,attr"`
	Shape   string `xml:"shape-rendering,attr"`
	Rects   []struct {
		Fill string `xml:"fill,attr"`
	} `xml:"rect"`
	Paths []struct {
		D    string `xml:"d,attr"`
		Fill string `xml:"fill,attr"`
	} `xml:"path"`
	Images []struct{} `xml:"image"`
}

// rasteriseSVG draws the SVG's one path at scale pixels per unit. It
// understands the path commands M, m, H, h, V, v and Z, requires every
// subpath to be an axis-aligned rectangle (a QR code is nothing else), and
// fails on anything it does not understand rather than guess.
func rasteriseSVG(t *testing.T, data []byte, scale int) image.Image {
	t.Helper()
	var doc svgDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("SVG is not well-formed XML: %v", err)
	}
	if len(doc.Paths) != 1 || len(doc.Images) != 0 {
		t.Fatalf("SVG has %d paths and %d images, want one path and no raster", len(doc.Paths), len(doc.Images))
	}
	if doc.Shape != "crispEdges" {
		t.Errorf("shape-rendering = %q, want crispEdges", doc.Shape)
	}
	if len(doc.Rects) != 1 || doc.Rects[0].Fill != "#fff" || doc.Paths[0].Fill != "#000" {
		t.Errorf("want a white background rect and a black path, got rects %+v, path fill %q", doc.Rects, doc.Paths[0].Fill)
	}
	vb := strings.Fields(doc.ViewBox)
	if len(vb) != 4 || vb[0] != "0" || vb[1] != "0" || vb[2] != vb[3] {
		t.Fatalf("viewBox %q is not a square from the origin", doc.ViewBox)
	}
	side, _ := strconv.Atoi(vb[2])
	img := image.NewGray(image.Rect(0, 0, side*scale, side*scale))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}

	var x, y float64
	var sub [][2]float64
	fill := func() {
		if len(sub) != 4 {
			t.Fatalf("subpath %v is not a rectangle", sub)
		}
		x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for _, p := range sub {
			x0, y0, x1, y1 = math.Min(x0, p[0]), math.Min(y0, p[1]), math.Max(x1, p[0]), math.Max(y1, p[1])
		}
		for _, p := range sub {
			if (p[0] != x0 && p[0] != x1) || (p[1] != y0 && p[1] != y1) {
				t.Fatalf("subpath %v is not an axis-aligned rectangle", sub)
			}
		}
		for py := int(y0) * scale; py < int(y1)*scale; py++ {
			for px := int(x0) * scale; px < int(x1)*scale; px++ {
				img.SetGray(px, py, color.Gray{})
			}
		}
		sub = nil
	}
	d := doc.Paths[0].D
	for len(d) > 0 {
		cmd := d[0]
		d = d[1:]
		num := func() float64 {
			d = strings.TrimLeft(d, " ,")
			end := strings.IndexFunc(d, func(r rune) bool { return !strings.ContainsRune("-.0123456789", r) })
			if end < 0 {
				end = len(d)
			}
			v, err := strconv.ParseFloat(d[:end], 64)
			if err != nil {
				t.Fatalf("bad number in path at %q", d)
			}
			d = d[end:]
			return v
		}
		switch cmd {
		case 'M':
			x, y = num(), num()
		case 'm':
			x, y = x+num(), y+num()
		case 'H':
			x = num()
		case 'h':
			x += num()
		case 'V':
			y = num()
		case 'v':
			y += num()
		case 'Z', 'z':
			fill()
			continue
		case ' ':
			continue
		default:
			t.Fatalf("path command %q not understood", cmd)
		}
		sub = append(sub, [2]float64{x, y})
	}
	if len(sub) != 0 {
		t.Fatalf("unclosed subpath %v", sub)
	}
	return img
}

func TestQRInvalid(t *testing.T) {
	t.Parallel()
	url := "https://hub.example/qr/AB12CD34"
	m, err := encode(url)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		content string
		size    int
	}{
		{"empty content", "", 256},
		{"content too long for a sticker", strings.Repeat("a", maxQRContent+1), 1024},
		{"invalid UTF-8", "https://hub.example/qr/\xff", 256},
		{"smaller than one pixel a module", url, m.n + 2*quietZone - 1},
		{"zero size", url, 0},
		{"too large", url, maxQRPixels + 1},
	}
	for _, tt := range tests {
		if _, err := QRPNG(tt.content, tt.size); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: QRPNG error = %v, want ErrInvalid", tt.name, err)
		}
		if tt.size == 256 || tt.size == 1024 {
			if _, err := QRSVG(tt.content); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: QRSVG error = %v, want ErrInvalid", tt.name, err)
			}
		}
	}
	// The smallest size that gives every module a pixel is accepted.
	if _, err := QRPNG(url, m.n+2*quietZone); err != nil {
		t.Errorf("QRPNG at one pixel a module: %v", err)
	}
}

func TestQRLevelAndSize(t *testing.T) {
	t.Parallel()
	// A typical sticker URL gives a code a phone reads from arm's length
	// on an A6 sticker: version 4 (33 modules) or smaller.
	m, err := encode("https://hub.example.in/qr/AB12CD34")
	if err != nil {
		t.Fatal(err)
	}
	if m.n > 33 {
		t.Errorf("code is %d modules wide, want at most 33 (version 4)", m.n)
	}
	// In byte mode a version 4 code holds 46 bytes at level Q (62 at M, 34
	// at H, 78 at L) and version 5 holds 60 at Q: 46 bytes → 33 modules and
	// 47 → 37 is level Q and no other.
	for _, tt := range []struct{ bytes, modules int }{{46, 33}, {47, 37}} {
		m, err := encode(strings.Repeat("a", tt.bytes))
		if err != nil {
			t.Fatal(err)
		}
		if m.n != tt.modules {
			t.Errorf("%d bytes → %d modules, want %d (level Q)", tt.bytes, m.n, tt.modules)
		}
	}
}
