// Package printout renders what ocpihub prints: the QR code of a connector
// (PNG and SVG), the A6 sticker that carries it (PDF), and the driver's
// receipt after a UPI-paid session (PDF).
//
// Rendering is pure: the functions take plain values (strings, int64 paise,
// time.Time) and return bytes, with no storage, network or clock. Callers
// (the UPI module, the admin API, the CLI) gather the data.
//
// PDFs embed Noto Sans Regular and Bold (SIL Open Font License 1.1; see
// fonts/README.md), subset to Latin text plus the rupee sign ₹ (U+20B9), so
// every PDF viewer and printer shows the same glyphs. Characters the font
// does not have (Devanagari, for instance) are printed as "?" rather than as
// blank boxes.
package printout

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"codeberg.org/go-pdf/fpdf"
	"golang.org/x/image/font/sfnt"
)

// ErrInvalid is wrapped by every error about input that cannot be printed:
// a missing required field, an inconsistent amount, content that does not
// fit the page.
var ErrInvalid = errors.New("invalid printout")

func invalid(field, issue string) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, field, issue)
}

var (
	//go:embed fonts/NotoSans-Regular.ttf
	fontRegular []byte
	//go:embed fonts/NotoSans-Bold.ttf
	fontBold []byte
)

// fontFamily is the family name the PDFs use for the embedded font.
const fontFamily = "NotoSans"

// ist is India Standard Time. India has kept UTC+05:30 without daylight
// saving since 1945, so a fixed zone is exact and needs no tzdata.
var ist = time.FixedZone("IST", 5*3600+1800)

// Colours, as RGB.
var (
	black = [3]int{0, 0, 0}
	grey  = [3]int{90, 90, 90}
)

// doc is one PDF being written: fpdf with our font loaded, and the font's
// character map to replace what it cannot show.
type doc struct {
	*fpdf.Fpdf
	font *sfnt.Font
	buf  sfnt.Buffer
	// line is the height of a receipt's row (0: receiptLine); a tax
	// invoice has more rows on its one page.
	line float64
}

// newDoc starts a one-page portrait PDF of w × h millimetres with margins
// of the given width all round, and its metadata. A zero created time
// leaves the PDF's creation date to fpdf (now).
func newDoc(w, h, margin float64, title string, created time.Time) (*doc, error) {
	f, err := sfnt.Parse(fontRegular)
	if err != nil {
		return nil, fmt.Errorf("parse embedded font: %w", err)
	}
	pdf := fpdf.NewCustom(&fpdf.InitType{OrientationStr: "P", UnitStr: "mm", Size: fpdf.SizeType{Wd: w, Ht: h}})
	d := &doc{Fpdf: pdf, font: f}
	pdf.SetCatalogSort(true)
	pdf.SetCompression(true)
	pdf.SetProducer("ocpihub", false)
	pdf.SetTitle(d.clean(title), true)
	pdf.SetLang("en-IN")
	if !created.IsZero() {
		pdf.SetCreationDate(created.UTC())
		pdf.SetModificationDate(created.UTC())
	}
	pdf.AddUTF8FontFromBytes(fontFamily, "", fontRegular)
	pdf.AddUTF8FontFromBytes(fontFamily, "B", fontBold)
	pdf.SetMargins(margin, margin, margin)
	pdf.SetAutoPageBreak(false, margin)
	pdf.SetCellMargin(0)
	pdf.AddPage()
	return d, pdf.Error()
}

// bytes finishes the PDF.
func (d *doc) bytes() ([]byte, error) {
	var b bytes.Buffer
	if err := d.Output(&b); err != nil {
		return nil, fmt.Errorf("write PDF: %w", err)
	}
	return b.Bytes(), nil
}

// style sets the font (bold or not), its size in points and the text colour.
func (d *doc) style(bold bool, pt float64, rgb [3]int) {
	s := ""
	if bold {
		s = "B"
	}
	d.SetFont(fontFamily, s, pt)
	d.SetTextColor(rgb[0], rgb[1], rgb[2])
}

// clean makes s printable with the embedded font: control characters become
// spaces (newlines are kept for multi-line cells) and characters the font
// has no glyph for become "?".
func (d *doc) clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case unicode.IsControl(r) || unicode.IsSpace(r):
			return ' '
		}
		if i, err := d.font.GlyphIndex(&d.buf, r); err != nil || i == 0 {
			return '?'
		}
		return r
	}, s)
}

// lines writes s as left-, right- or centre-aligned ("L", "R", "C") text
// wrapped to width w at the current position, advancing by lh per line.
func (d *doc) lines(w, lh float64, s, align string) {
	d.MultiCell(w, lh, d.clean(s), "", align, false)
}

// drawQR paints the modules of m as filled black squares in the square of
// side size (quiet zone included) whose top-left corner is (x, y). Vector
// squares stay sharp at any print resolution; each horizontal run of dark
// modules is one rectangle.
func (d *doc) drawQR(m matrix, x, y, size float64) {
	mod := size / float64(m.n+2*quietZone)
	x0, y0 := x+quietZone*mod, y+quietZone*mod
	d.SetFillColor(0, 0, 0)
	m.runs(func(cx, cy, w int) {
		d.Rect(x0+float64(cx)*mod, y0+float64(cy)*mod, float64(w)*mod, mod, "F")
	})
}

// formatIST writes t in India Standard Time, as on a receipt.
func formatIST(t time.Time) string {
	return t.In(ist).Format("02 Jan 2006, 15:04:05") + " IST"
}

// formatDuration writes a session duration in whole seconds: "1 h 05 min",
// "42 min 10 s", "35 s".
func formatDuration(d time.Duration) string {
	s := int64(d / time.Second)
	switch {
	case s >= 3600:
		return fmt.Sprintf("%d h %02d min", s/3600, s%3600/60)
	case s >= 60:
		return fmt.Sprintf("%d min %02d s", s/60, s%60)
	default:
		return fmt.Sprintf("%d s", s)
	}
}
