package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
)

const qrUsage = `Usage: ocpihub qr <command> [flags]

  create --location ID --evse UID --connector ID [--ref REF] [--tenant CC/PID]
                        map a new QR sticker to a connector of the directory (REF: 4–36 letters,
                        digits, - or _; generated when omitted; the tenant is the CPO party,
                        found from the location when omitted)
  list [--all]          list active mappings (--all: disabled ones too)
  show REF              show one mapping and the URL its QR code encodes
  disable REF           stop a sticker taking payments (the connector may then get a new one)
  render REF [--format png|svg|pdf] [--out FILE]
                        draw the printable sticker (default: PDF to qr-REF.pdf)

Every command takes the serve flags (--db, --public-url, …) and --json.
`

func cmdQR(ctx context.Context, e env, args []string) error {
	if asked, err := helpAsked(e, args, qrUsage, "qr needs a command"); asked {
		return err
	}
	sub, rest := args[0], args[1:]
	fs, cfg, apply := newFlagSet(e, "qr "+sub, "qr "+sub+" [flags]")
	asJSON := fs.Bool("json", false, "print one JSON object")
	var in qrmap.QRCreate
	var all *bool
	var format, out *string
	switch sub {
	case "create":
		fs.StringVar(&in.LocationID, "location", "", "location id (required)")
		fs.StringVar(&in.EVSEUID, "evse", "", "EVSE uid (required)")
		fs.StringVar(&in.ConnectorID, "connector", "", "connector id (required)")
		fs.StringVar(&in.QRRef, "ref", "", "the reference printed in the code (default: generated)")
		fs.StringVar(&in.TenantID, "tenant", "", "the CPO party owning the location, CC*PID (default: from the location)")
	case "list":
		all = fs.Bool("all", false, "include disabled mappings")
	case "show", "disable":
	case "render":
		format = fs.String("format", "pdf", "png, svg or pdf")
		out = fs.String("out", "", "file to write (default qr-REF.FORMAT; - for stdout)")
	default:
		return usageError{fmt.Sprintf("unknown qr command %q\n\n%s", sub, qrUsage)}
	}
	need := ""
	if sub == "show" || sub == "disable" || sub == "render" {
		need = "qr " + sub + " needs a QR reference (see ocpihub qr list)"
	}
	ref, err := parseSubcommand(fs, rest, need, apply)
	if err != nil {
		return err
	}
	if sub == "create" && (in.LocationID == "" || in.EVSEUID == "" || in.ConnectorID == "") {
		return usageError{"qr create needs --location, --evse and --connector"}
	}
	return withUPI(ctx, *cfg, func(u *upi.Service) error {
		switch sub {
		case "create":
			m, err := u.CreateQR(ctx, in)
			if err != nil {
				return err
			}
			return printQR(e, *asJSON, m, "QR mapping created. Print its sticker with: ocpihub qr render "+m.QRRef+"\n")
		case "list":
			f := qrmap.QRFilter{Status: qrmap.Active}
			if *all {
				f.Status = ""
			}
			return printAll(e, *asJSON, "qr_mappings", func(page ocpi.PageRequest) ([]*qrmap.QRMapping, ocpi.Page, error) {
				return u.ListQR(ctx, f, page)
			}, "QR REF\tTENANT\tLOCATION\tEVSE\tCONNECTOR\tSTATUS\tURL", func(w io.Writer, m *qrmap.QRMapping) {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.QRRef, m.TenantID, m.LocationID, m.EVSEUID, m.ConnectorID, m.Status, m.URL)
			})
		case "show":
			m, err := u.QR(ctx, ref)
			if err != nil {
				return err
			}
			return printQR(e, *asJSON, m, "")
		case "disable":
			m, err := u.DisableQR(ctx, ref)
			if err != nil {
				return err
			}
			return printQR(e, *asJSON, m, "Disabled: the sticker takes no more payments.\n")
		case "render":
			f := strings.ToLower(*format)
			b, err := u.Sticker(ctx, ref, f)
			if err != nil {
				return err
			}
			path := *out
			if path == "" {
				path = "qr-" + ref + "." + f
			}
			if path == "-" {
				_, err = e.stdout.Write(b)
				return err
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				return err
			}
			return print(e, *asJSON, map[string]any{"file": path, "format": f, "bytes": len(b)},
				fmt.Sprintf("Sticker written to %s (%s).\n", path, humanBytes(len(b))))
		}
		return nil
	})
}

func printQR(e env, asJSON bool, m *qrmap.QRMapping, prefix string) error {
	text := fmt.Sprintf("%sQR %s (%s)\n  tenant:    %s\n  connector: %s / %s / %s\n  url:       %s\n",
		prefix, m.QRRef, m.Status, m.TenantID, m.LocationID, m.EVSEUID, m.ConnectorID, m.URL)
	return print(e, asJSON, m, text)
}

func humanBytes(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/1024)
}
