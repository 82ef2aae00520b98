package printout

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strconv"
	"unicode/utf8"

	"github.com/boombuler/barcode/qr"
)

// quietZone is the white margin around a QR code, in modules; ISO/IEC 18004
// asks for four.
const quietZone = 4

// maxQRPixels bounds the PNG size a caller may ask for, so that a request
// parameter cannot make us allocate an arbitrarily large image.
const maxQRPixels = 4096

// maxQRContent bounds what a QR code may carry: a sticker URL is well under
// it, and larger codes are too dense to scan from a printed sticker.
const maxQRContent = 512

// matrix is a QR code's modules, without the quiet zone.
type matrix struct {
	n    int
	dark []bool // row-major, n*n
}

func (m matrix) at(x, y int) bool { return m.dark[y*m.n+x] }

// encode makes the QR code for content. Every code ocpihub prints uses error
// correction level Q: it restores up to about 25% of damaged modules, which a
// sticker on a charger outdoors (scratches, dirt, glare) needs more than the
// smaller code level M would give. A URL of the form {public_url}/qr/{qr_ref}
// still fits a version 3–5 code (29–37 modules), easy to scan from a phone.
func encode(content string) (matrix, error) {
	if content == "" {
		return matrix{}, fmt.Errorf("%w: QR content is empty", ErrInvalid)
	}
	if len(content) > maxQRContent {
		return matrix{}, fmt.Errorf("%w: QR content is %d bytes, at most %d fit a printable code", ErrInvalid, len(content), maxQRContent)
	}
	if !utf8.ValidString(content) {
		return matrix{}, fmt.Errorf("%w: QR content is not valid UTF-8", ErrInvalid)
	}
	code, err := qr.Encode(content, qr.Q, qr.Auto)
	if err != nil {
		return matrix{}, fmt.Errorf("encode QR code: %w", err)
	}
	b := code.Bounds()
	m := matrix{n: b.Dx(), dark: make([]bool, b.Dx()*b.Dy())}
	for y := 0; y < m.n; y++ {
		for x := 0; x < m.n; x++ {
			r, _, _, _ := code.At(b.Min.X+x, b.Min.Y+y).RGBA()
			m.dark[y*m.n+x] = r < 0x8000
		}
	}
	return m, nil
}

// runs calls f for every horizontal run of dark modules in the matrix, with
// the run's first column, its row and its length.
func (m matrix) runs(f func(x, y, w int)) {
	for y := 0; y < m.n; y++ {
		for x := 0; x < m.n; {
			if !m.at(x, y) {
				x++
				continue
			}
			start := x
			for x < m.n && m.at(x, y) {
				x++
			}
			f(start, y, x-start)
		}
	}
}

// QRPNG renders content as a QR code in a square black-on-white PNG of
// exactly sizePx pixels a side, quiet zone included. Every module is the same
// whole number of pixels (no smoothing, so the code stays sharp when printed
// or scaled by an integer factor); the pixels left over widen the white
// margin. A size too small to give each module a pixel, or above 4096, is an
// ErrInvalid.
func QRPNG(content string, sizePx int) ([]byte, error) {
	m, err := encode(content)
	if err != nil {
		return nil, err
	}
	total := m.n + 2*quietZone
	if sizePx < total || sizePx > maxQRPixels {
		return nil, fmt.Errorf("%w: PNG size %d px: this code needs %d to %d px", ErrInvalid, sizePx, total, maxQRPixels)
	}
	scale := sizePx / total
	offset := (sizePx - m.n*scale) / 2
	// A two-colour palette makes the encoder write a 1-bit PNG; index 0
	// (white) is the zero value, so only dark modules are painted.
	img := image.NewPaletted(image.Rect(0, 0, sizePx, sizePx), color.Palette{color.White, color.Black})
	m.runs(func(x, y, w int) {
		for py := offset + y*scale; py < offset+(y+1)*scale; py++ {
			row := img.Pix[py*img.Stride:]
			for px := offset + x*scale; px < offset+(x+w)*scale; px++ {
				row[px] = 1
			}
		}
	})
	var buf bytes.Buffer
	var enc png.Encoder
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("write QR PNG: %w", err)
	}
	return buf.Bytes(), nil
}

// QRSVG renders content as a QR code in a standalone SVG document: one unit
// per module in the viewBox (quiet zone included), a white background and
// one path holding every dark module, drawn with crisp edges so that it
// scales to any print size without blur. Its intrinsic size is 8 px per
// module; CSS or the embedding page may scale it freely.
func QRSVG(content string) ([]byte, error) {
	m, err := encode(content)
	if err != nil {
		return nil, err
	}
	total := strconv.Itoa(m.n + 2*quietZone)
	px := strconv.Itoa((m.n + 2*quietZone) * 8)
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="` + px + `" height="` + px +
		`" viewBox="0 0 ` + total + ` ` + total + `" shape-rendering="crispEdges">` + "\n")
	b.WriteString(`<rect width="` + total + `" height="` + total + `" fill="#fff"/>` + "\n")
	b.WriteString(`<path fill="#000" d="`)
	m.runs(func(x, y, w int) {
		// Absolute move, then a w×1 rectangle drawn with relative lines.
		fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", x+quietZone, y+quietZone, w, w)
	})
	b.WriteString(`"/>` + "\n</svg>\n")
	return b.Bytes(), nil
}
