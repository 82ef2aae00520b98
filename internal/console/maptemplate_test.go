package console

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/console/ui"
)

// TestMapTemplate: the map renders as SVG with every point, escaped.
func TestMapTemplate(t *testing.T) {
	t.Parallel()
	c := New(Config{})
	pts := []ui.MapPoint{{ID: "x", Name: `<script>alert(1)</script>`, Status: "AVAILABLE", Latitude: "1", Longitude: "2", Href: "/locations/x"},
		{ID: "y", Name: "Y", Status: "CHARGING", Latitude: "1.5", Longitude: "2.5"}}
	var buf bytes.Buffer
	if err := c.tmpl.page("components").ExecuteTemplate(&buf, "map", c.Map(pts)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Count(out, "<circle") != 2 || !strings.Contains(out, `href="/console/locations/x"`) || strings.Contains(out, "<script>") {
		t.Errorf("map SVG:\n%s", out)
	}
}
