package printout

import (
	"fmt"
	"strings"
	"time"
)

// Sticker is what the printed QR sticker of one connector shows. The caller
// fills it from the QR mapping, the location directory and the tariff.
type Sticker struct {
	// URL is what the QR code encodes: ocpihub's landing page for this
	// connector, {public_url}/qr/{qr_ref}. Required.
	URL string
	// QRRef is the mapping's qr_ref, printed small under the code so that a
	// driver can quote it to support. Required.
	QRRef string
	// LocationName is the location's name. Required.
	LocationName string
	// Address is the location's postal address as it should be printed
	// (street, city, postal code); "\n" starts a new line, long lines wrap.
	Address string
	// EVSEID is the EVSE's evse_id (eMI3, e.g. "IN*ABC*E1001*1") or, when it
	// has none, its uid. Required.
	EVSEID string
	// ConnectorID is the connector's id within the EVSE. Required.
	ConnectorID string
	// Standard is the connector's OCPI standard (e.g. "IEC_62196_T2_COMBO"),
	// printed by its common name ("CCS2"); an unknown value is printed as
	// given, and "" prints nothing.
	Standard string
	// MaxPowerW is the connector's maximum power in watts, printed in kW;
	// 0 prints nothing.
	MaxPowerW int64
	// TariffLines summarise the tariff, one printed line each, e.g.
	// "₹18.00/kWh + ₹2.00/min after 60 min". At most 4.
	TariffLines []string
	// Operator is the name of whoever runs the charger (or the hub operator
	// selling the charge), printed at the foot of the sticker. Required.
	Operator string
	// Support is optional contact text printed with the operator, e.g.
	// "Help: 1800 123 4567".
	Support string
}

// Sticker page: A6 portrait (105 × 148 mm), the size of a charger-side
// label that a phone scans from arm's length. The QR code, quiet zone
// included, is 70 mm wide: with a version 4 code each module is 1.7 mm.
const (
	stickerW, stickerH = 105.0, 148.0
	stickerMargin      = 6.0
	stickerQR          = 70.0
	maxTariffLines     = 4
)

func (s Sticker) validate() error {
	for _, f := range []struct{ name, v string }{
		{"url", s.URL}, {"qr_ref", s.QRRef}, {"location_name", s.LocationName},
		{"evse_id", s.EVSEID}, {"connector_id", s.ConnectorID}, {"operator", s.Operator},
	} {
		if strings.TrimSpace(f.v) == "" {
			return invalid(f.name, "required")
		}
	}
	if s.MaxPowerW < 0 {
		return invalid("max_power_w", "negative")
	}
	if len(s.TariffLines) > maxTariffLines {
		return invalid("tariff_lines", fmt.Sprintf("%d lines, at most %d fit a sticker", len(s.TariffLines), maxTariffLines))
	}
	return nil
}

// StickerPDF renders the connector's sticker as a one-page A6 PDF: "Scan
// with any UPI app" over the QR code (large, centred, drawn as vectors), the
// QR reference under it, then the location name and address, the EVSE and
// connector (standard and power), the tariff summary, and the operator at
// the foot. Missing required fields, or text too long to fit the page, are
// an ErrInvalid: a sticker is never printed cut short.
func StickerPDF(s Sticker) ([]byte, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	m, err := encode(s.URL)
	if err != nil {
		return nil, err
	}
	d, err := newDoc(stickerW, stickerH, stickerMargin, "Charging QR "+s.QRRef, time.Time{})
	if err != nil {
		return nil, err
	}
	w := stickerW - 2*stickerMargin
	x := stickerMargin

	d.SetXY(x, stickerMargin)
	d.style(true, 17, black)
	d.lines(w, 7, "Scan with any UPI app", "C")
	d.style(false, 9, grey)
	d.lines(w, 4.5, "to pay and start charging", "C")

	qrTop := d.GetY() + 1
	d.drawQR(m, (stickerW-stickerQR)/2, qrTop, stickerQR)
	d.SetXY(x, qrTop+stickerQR)
	d.style(false, 8, grey)
	d.lines(w, 3.5, "QR ref "+s.QRRef, "C")

	d.SetXY(x, d.GetY()+2)
	d.style(true, 12, black)
	d.lines(w, 5.2, s.LocationName, "C")
	if s.Address != "" {
		d.style(false, 8.5, grey)
		d.lines(w, 3.8, s.Address, "C")
	}

	d.SetXY(x, d.GetY()+1.5)
	d.style(false, 9, black)
	d.lines(w, 4.2, "EVSE "+s.EVSEID+" · Connector "+s.ConnectorID, "C")
	if c := connectorText(s.Standard, s.MaxPowerW); c != "" {
		d.lines(w, 4.2, c, "C")
	}
	if len(s.TariffLines) > 0 {
		d.SetXY(x, d.GetY()+1)
		d.style(true, 9, black)
		for _, l := range s.TariffLines {
			d.lines(w, 4.2, l, "C")
		}
	}
	contentEnd := d.GetY()

	foot := "Operated by " + s.Operator
	if s.Support != "" {
		foot += " · " + s.Support
	}
	d.style(false, 7.5, grey)
	footLines := len(d.SplitText(d.clean(foot), w))
	footTop := stickerH - stickerMargin - float64(footLines)*3.4
	if contentEnd > footTop-1 {
		return nil, fmt.Errorf("%w: sticker text does not fit on an A6 page; shorten the address or the tariff lines", ErrInvalid)
	}
	d.SetXY(x, footTop)
	d.lines(w, 3.4, foot, "C")
	return d.bytes()
}

// connectorText describes a connector for a driver: "CCS2 · 60 kW".
func connectorText(standard string, maxPowerW int64) string {
	var parts []string
	if standard != "" {
		parts = append(parts, standardName(standard))
	}
	if maxPowerW > 0 {
		parts = append(parts, formatKW(maxPowerW))
	}
	return strings.Join(parts, " · ")
}

// standardName gives the common name of an OCPI ConnectorType a driver in
// India recognises on the plug; other values are returned as given.
func standardName(s string) string {
	switch s {
	case "IEC_62196_T2_COMBO":
		return "CCS2"
	case "IEC_62196_T1_COMBO":
		return "CCS1"
	case "IEC_62196_T2":
		return "Type 2"
	case "IEC_62196_T1":
		return "Type 1"
	case "CHADEMO":
		return "CHAdeMO"
	case "CHAOJI":
		return "ChaoJi"
	case "GBT_DC":
		return "GB/T DC"
	case "GBT_AC":
		return "GB/T AC"
	case "DOMESTIC_D":
		return "15 A socket (Type D)"
	case "DOMESTIC_M":
		return "Type M socket"
	case "IEC_60309_2_single_16":
		return "IEC 60309 16 A"
	}
	return s
}

// formatKW writes watts as kilowatts rounded to one decimal: 60000 → "60 kW",
// 7400 → "7.4 kW", 3300 → "3.3 kW".
func formatKW(w int64) string {
	tenths := (w + 50) / 100
	if tenths%10 == 0 {
		return fmt.Sprintf("%d kW", tenths/10)
	}
	return fmt.Sprintf("%d.%d kW", tenths/10, tenths%10)
}
