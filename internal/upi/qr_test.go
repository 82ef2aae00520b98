package upi_test

import (
	"bytes"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/upi/printer"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
)

// TestQRMappings drives the QR mapping admin API: create (given and
// generated references, tenant derived from the location), conflicts that
// name the other mapping, bad input refused with the field and nothing
// stored, list, get, disable, and a new sticker after disabling.
func TestQRMappings(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		h := b.h
		resp := h.AdminDo(t, http.MethodPost, upiBase+"/qr", map[string]any{
			"qr_ref": "KORA-E1", "tenant_id": "in*cpo", "location_id": "loc1", "evse_uid": "e1", "connector_id": "1"})
		if resp.HTTPStatus != http.StatusCreated {
			t.Fatalf("create: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		m := data[qrmap.QRMapping](t, resp)
		if m.QRRef != "KORA-E1" || m.TenantID != "IN*CPO" || m.LocationID != "LOC1" || m.EVSEUID != "E1" || m.ConnectorID != "1" ||
			m.Status != qrmap.Active || m.URL != h.PublicURL()+"/qr/KORA-E1" {
			t.Errorf("created %+v", m)
		}

		// Generated reference, tenant from the location.
		resp = h.AdminDo(t, http.MethodPost, upiBase+"/qr", map[string]any{"location_id": locID, "evse_uid": "E2", "connector_id": "1"})
		if resp.HTTPStatus != http.StatusCreated {
			t.Fatalf("create generated: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		gen := data[qrmap.QRMapping](t, resp)
		if len(gen.QRRef) != 10 || gen.TenantID != "IN*CPO" {
			t.Errorf("generated mapping %+v", gen)
		}

		before := count(t, b, "")
		bad := []badRequest{
			{"same connector", map[string]any{"qr_ref": "OTHER-1", "location_id": locID, "evse_uid": "E1", "connector_id": "1"},
				http.StatusConflict, ocpi.StatusInvalidParams, "connector_id"},
			{"reused qr_ref", map[string]any{"qr_ref": "KORA-E1", "location_id": locID, "evse_uid": "E2", "connector_id": "1"},
				http.StatusConflict, ocpi.StatusInvalidParams, "qr_ref"},
			{"unknown location", map[string]any{"location_id": "NOPE", "evse_uid": "E1", "connector_id": "1"},
				http.StatusNotFound, ocpi.StatusUnknownLocation, "location_id"},
			{"unknown location of the tenant", map[string]any{"tenant_id": "IN*CPO", "location_id": "NOPE", "evse_uid": "E1", "connector_id": "1"},
				http.StatusNotFound, ocpi.StatusUnknownLocation, "location_id"},
			{"unknown EVSE", map[string]any{"location_id": locID, "evse_uid": "E9", "connector_id": "1"},
				http.StatusNotFound, ocpi.StatusUnknownLocation, "evse_uid"},
			{"unknown connector", map[string]any{"location_id": locID, "evse_uid": "E1", "connector_id": "7"},
				http.StatusNotFound, ocpi.StatusUnknownLocation, "connector_id"},
			{"no location_id", map[string]any{"evse_uid": "E1", "connector_id": "1"}, http.StatusOK, ocpi.StatusInvalidParams, "location_id"},
			{"no evse_uid", map[string]any{"location_id": locID, "connector_id": "1"}, http.StatusOK, ocpi.StatusInvalidParams, "evse_uid"},
			{"no connector_id", map[string]any{"location_id": locID, "evse_uid": "E1"}, http.StatusOK, ocpi.StatusInvalidParams, "connector_id"},
			{"long location_id", map[string]any{"location_id": strings.Repeat("L", 37), "evse_uid": "E1", "connector_id": "1"},
				http.StatusOK, ocpi.StatusInvalidParams, "location_id"},
			{"bad qr_ref", map[string]any{"qr_ref": "a b", "location_id": locID, "evse_uid": "E1", "connector_id": "1"},
				http.StatusOK, ocpi.StatusInvalidParams, "qr_ref"},
			{"bad tenant", map[string]any{"tenant_id": "IND*CPO", "location_id": locID, "evse_uid": "E1", "connector_id": "1"},
				http.StatusOK, ocpi.StatusInvalidParams, "tenant_id"},
			{"wrong type", map[string]any{"location_id": 7, "evse_uid": "E1", "connector_id": "1"}, http.StatusOK, ocpi.StatusInvalidParams, "location_id"},
			{"not JSON", []byte("qr_ref=x"), http.StatusBadRequest, ocpi.StatusInvalidParams, ""},
		}
		for _, c := range bad {
			hubtest.WantError(t, c.what, h.AdminDo(t, http.MethodPost, upiBase+"/qr", c.body), c.http, c.code, c.field)
		}
		if n := count(t, b, ""); n != before {
			t.Errorf("refused creates changed the mappings: %d, want %d", n, before)
		}
		// The conflict names the mapping that holds the connector.
		if resp := h.AdminDo(t, http.MethodPost, upiBase+"/qr", map[string]any{"location_id": locID, "evse_uid": "E1", "connector_id": "1"}); !strings.Contains(string(resp.Body), "KORA-E1") {
			t.Errorf("conflict does not name KORA-E1: %s", resp.Body)
		}

		// Get, list with filters, disable, and a new mapping for the
		// connector afterwards.
		if got := data[qrmap.QRMapping](t, h.AdminDo(t, http.MethodGet, upiBase+"/qr/KORA-E1", nil)); got.EVSEUID != "E1" {
			t.Errorf("get: %+v", got)
		}
		hubtest.WantError(t, "get unknown", h.AdminDo(t, http.MethodGet, upiBase+"/qr/NOPE", nil), http.StatusNotFound, ocpi.StatusClientError, "")
		hubtest.WantError(t, "list bad status", h.AdminDo(t, http.MethodGet, upiBase+"/qr?status=GONE", nil), http.StatusOK, ocpi.StatusInvalidParams, "status")
		resp = h.AdminDo(t, http.MethodGet, upiBase+"/qr?limit=1", nil)
		if list := data[[]qrmap.QRMapping](t, resp); len(list) != 1 || resp.Header.Get("X-Total-Count") != "2" || resp.Header.Get("Link") == "" {
			t.Errorf("first page: %d items, total %s, link %q", len(list), resp.Header.Get("X-Total-Count"), resp.Header.Get("Link"))
		}
		m = data[qrmap.QRMapping](t, h.AdminDo(t, http.MethodPost, upiBase+"/qr/KORA-E1/disable", nil))
		if m.Status != qrmap.Disabled {
			t.Errorf("disabled: %+v", m)
		}
		if again := h.AdminDo(t, http.MethodPost, upiBase+"/qr/KORA-E1/disable", nil); again.HTTPStatus != http.StatusOK {
			t.Errorf("disable twice: HTTP %d", again.HTTPStatus)
		}
		hubtest.WantError(t, "disable unknown", h.AdminDo(t, http.MethodPost, upiBase+"/qr/NOPE/disable", nil), http.StatusNotFound, ocpi.StatusClientError, "")
		if n := count(t, b, "?status=ACTIVE"); n != 1 {
			t.Errorf("%d active mappings, want 1", n)
		}
		resp = h.AdminDo(t, http.MethodPost, upiBase+"/qr", map[string]any{"qr_ref": "KORA-E1-V2", "location_id": locID, "evse_uid": "E1", "connector_id": "1"})
		if resp.HTTPStatus != http.StatusCreated {
			t.Errorf("new mapping after disabling: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		// Stickers: the QR code alone as PNG and SVG, the printable A6 PDF.
		for format, want := range map[string]string{"png": "\x89PNG", "svg": "<svg", "pdf": "%PDF-"} {
			resp := b.h.Do(t, http.MethodGet, upiBase+"/qr/KORA-E1-V2/sticker/"+format, hubtest.AdminToken, nil, nil)
			if resp.HTTPStatus != http.StatusOK || resp.Header.Get("Content-Type") != printer.StickerFormats[format] ||
				!strings.Contains(string(resp.Body[:min(len(resp.Body), 200)]), want) {
				t.Errorf("sticker %s: HTTP %d %s, %d bytes", format, resp.HTTPStatus, resp.Header.Get("Content-Type"), len(resp.Body))
			}
			if format == "png" {
				img, err := png.Decode(bytes.NewReader(resp.Body))
				if err != nil || img.Bounds().Dx() != 1024 {
					t.Errorf("sticker PNG: %v %v", err, img)
				}
			}
		}
		if resp := b.h.Do(t, http.MethodGet, upiBase+"/qr/KORA-E1-V2/sticker/pdf", "", nil, nil); resp.HTTPStatus != http.StatusUnauthorized {
			t.Errorf("sticker without the admin token: HTTP %d", resp.HTTPStatus)
		}
		hubtest.WantError(t, "sticker in a bad format", h.AdminDo(t, http.MethodGet, upiBase+"/qr/KORA-E1-V2/sticker/gif", nil),
			http.StatusOK, ocpi.StatusInvalidParams, "format")
		hubtest.WantError(t, "sticker of a disabled mapping", h.AdminDo(t, http.MethodGet, upiBase+"/qr/KORA-E1/sticker/png", nil),
			http.StatusOK, ocpi.StatusInvalidParams, "qr_ref")
	})
}

// count returns how many mappings a list query finds.
func count(t *testing.T, b *bundle, query string) int {
	t.Helper()
	resp := b.h.AdminDo(t, http.MethodGet, upiBase+"/qr"+query, nil)
	return len(data[[]qrmap.QRMapping](t, resp))
}
