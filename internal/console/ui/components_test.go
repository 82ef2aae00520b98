package ui

import (
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestChartBars: bar heights are proportional to the values on a 1-2-5
// axis, every value has a labelled bar, and amounts read exactly in their
// unit.
func TestChartBars(t *testing.T) {
	t.Parallel()
	c := Chart{Title: "Sessions", Labels: []string{"Mar 1", "Mar 2", "Mar 3"}, Series: []Series{{Name: "Sessions", Values: []int64{10, 40, 0}}}}
	v := c.View()
	if v.Empty || len(v.Bars) != 3 {
		t.Fatalf("bars: %+v", v.Bars)
	}
	var labels []string
	for _, tk := range v.YTicks {
		labels = append(labels, tk.Label)
	}
	if diff := cmp.Diff([]string{"0", "10", "20", "30", "40"}, labels); diff != "" {
		t.Errorf("y ticks (-want +got):\n%s", diff)
	}
	base := v.PlotY + v.PlotH
	if h := v.Bars[1].H; math.Abs(h-v.PlotH) > 0.2 {
		t.Errorf("the largest bar is %.1f high, want the plot height %.1f", h, v.PlotH)
	}
	if h := v.Bars[0].H; math.Abs(h-v.PlotH/4) > 0.2 {
		t.Errorf("10 of 40 is %.1f high, want %.1f", h, v.PlotH/4)
	}
	if v.Bars[2].H != 0 || v.Bars[0].Y+v.Bars[0].H-base > 0.2 {
		t.Errorf("bars do not stand on the axis: %+v", v.Bars)
	}
	if v.Bars[1].Title != "Sessions · Mar 2: 40" {
		t.Errorf("bar title %q", v.Bars[1].Title)
	}

	money := Chart{Labels: []string{"a", "b"}, Kind: "stacked", Unit: "₹", Scale: 100, Decimals: 2,
		Series: []Series{{Name: "Captured", Values: []int64{123456, 5}}, {Name: "Refunded", Values: []int64{50, 0}}}}.View()
	if len(money.Bars) != 3 { // a zero part draws nothing
		t.Fatalf("stacked bars: %+v", money.Bars)
	}
	if money.Bars[0].Title != "Captured · a: 1,234.56 ₹" || money.Table[1][1] != "1,234.56 ₹" || money.Table[2][1] != "0.50 ₹" {
		t.Errorf("money labels: %q, %q", money.Bars[0].Title, money.Table)
	}
	if top := money.Bars[1]; math.Abs(top.Y+top.H-money.Bars[0].Y) > 0.2 {
		t.Errorf("the refunded part does not sit on the captured part: %+v", money.Bars[:2])
	}
}

// TestChartLinesAndEmpty: lines pass through every point; no data is an
// empty chart, not a broken one.
func TestChartLinesAndEmpty(t *testing.T) {
	t.Parallel()
	v := Chart{Kind: "line", Unit: "kWh", Scale: 1000, Decimals: 1, Labels: DailyLabels(time.Date(2025, 3, 3, 10, 0, 0, 0, time.UTC), 3, nil),
		Series: []Series{{Name: "Energy", Values: []int64{1500, 2300, 800}}}}.View()
	if len(v.Lines) != 1 || strings.Count(v.Lines[0].Points, ",") != 3 || len(v.Lines[0].Dots) != 3 {
		t.Fatalf("line: %+v", v.Lines)
	}
	if v.Lines[0].Dots[1].Title != "Energy · Mar 2: 2.3 kWh" {
		t.Errorf("dot title %q", v.Lines[0].Dots[1].Title)
	}
	var ticks []string
	for _, tk := range v.YTicks {
		ticks = append(ticks, tk.Label)
	}
	if diff := cmp.Diff([]string{"0.0", "0.5", "1.0", "1.5", "2.0", "2.5"}, ticks); diff != "" {
		t.Errorf("kWh ticks (-want +got):\n%s", diff)
	}
	if !(Chart{Labels: []string{"x"}}).View().Empty || !(Chart{Series: []Series{{Name: "s"}}}).View().Empty {
		t.Error("a chart without labels or series is not empty")
	}
}

func TestScaledAndNiceScale(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v, scale int64
		dec      int
		want     string
	}{
		{123456, 100, 2, "1,234.56"}, {-5, 100, 2, "-0.05"}, {999, 1000, 1, "1.0"}, {1949, 1000, 1, "1.9"}, {1950, 1000, 1, "2.0"},
		{1234567, 1, 0, "1,234,567"}, {0, 100, 2, "0.00"},
	} {
		if got := Scaled(tc.v, tc.scale, tc.dec); got != tc.want {
			t.Errorf("Scaled(%d, %d, %d) = %q, want %q", tc.v, tc.scale, tc.dec, got, tc.want)
		}
	}
	for _, tc := range []struct{ max, top, step int64 }{{1, 1, 1}, {7, 8, 2}, {40, 40, 10}, {41, 50, 10}, {999, 1000, 200}, {2300, 2500, 500}} {
		if top, step := niceScale(tc.max, 1); top != tc.top || step != tc.step {
			t.Errorf("niceScale(%d) = %d, %d; want %d, %d", tc.max, top, step, tc.top, tc.step)
		}
	}
}

// TestMapProjection: points keep their geographic order on the map (east is
// right, north is up), fill the view, and points without coordinates are
// counted, not drawn; the grid is labelled in degrees; tiles cover the view.
func TestMapProjection(t *testing.T) {
	t.Parallel()
	m := NewMap(SamplePoints, MapOptions{})
	if len(m.Points) != 9 || m.Skipped != 1 {
		t.Fatalf("%d points, %d skipped", len(m.Points), m.Skipped)
	}
	at := map[string]MapDot{}
	for _, p := range m.Points {
		at[p.ID] = p
		if p.X < 0 || p.X > float64(m.Width) || p.Y < 0 || p.Y > float64(m.Height) {
			t.Errorf("%s is outside the map at %.0f,%.0f", p.ID, p.X, p.Y)
		}
	}
	del, blr, bom, ccu := at["LOC-DEL-1"], at["LOC-BLR-1"], at["LOC-BOM-1"], at["LOC-CCU-1"]
	if !(del.Y < bom.Y && bom.Y < blr.Y) {
		t.Errorf("north is not up: Delhi %.0f, Mumbai %.0f, Bengaluru %.0f", del.Y, bom.Y, blr.Y)
	}
	if !(bom.X < del.X && del.X < ccu.X) {
		t.Errorf("east is not right: Mumbai %.0f, Delhi %.0f, Kolkata %.0f", bom.X, del.X, ccu.X)
	}
	// The points span most of the height (the tighter dimension here).
	minY, maxY := math.Inf(1), math.Inf(-1)
	for _, p := range m.Points {
		minY, maxY = math.Min(minY, p.Y), math.Max(maxY, p.Y)
	}
	if span := (maxY - minY) / float64(m.Height); span < 0.7 || span > 0.9 {
		t.Errorf("the points span %.0f%% of the height", span*100)
	}
	// Statuses: a dot's tone and the legend's counts.
	if at["LOC-PNQ-1"].Tone != "bad" || at["LOC-BOM-1"].Tone != "active" || del.Tone != "ok" {
		t.Errorf("tones: %s %s %s", at["LOC-PNQ-1"].Tone, at["LOC-BOM-1"].Tone, del.Tone)
	}
	if diff := cmp.Diff([]LegendItem{{"AVAILABLE", "ok", 4}, {"BLOCKED", "warn", 1}, {"CHARGING", "active", 2}, {"INOPERATIVE", "bad", 1}, {"OUTOFORDER", "bad", 1}}, m.Legend); diff != "" {
		t.Errorf("legend (-want +got):\n%s", diff)
	}
	var lat, lon []string
	for _, g := range m.Grid {
		if g.Vertical {
			lon = append(lon, g.Label)
		} else {
			lat = append(lat, g.Label)
		}
	}
	if !contains(lon, "80°E") || !contains(lat, "20°N") {
		t.Errorf("grid labels: %v %v", lon, lat)
	}
	if len(m.Tiles) != 0 {
		t.Error("tiles without a tile URL")
	}

	tiled := NewMap(SamplePoints, MapOptions{TileURL: "https://tiles.example/{z}/{x}/{y}.png", Attribution: "© example"})
	if len(tiled.Tiles) == 0 {
		t.Fatal("no tiles")
	}
	// The tiles cover the view without gaps at the corners.
	covered := func(x, y float64) bool {
		for _, tl := range tiled.Tiles {
			if x >= tl.X && x <= tl.X+tl.Size && y >= tl.Y && y <= tl.Y+tl.Size {
				return true
			}
		}
		return false
	}
	for _, c := range [][2]float64{{1, 1}, {959, 1}, {1, 479}, {959, 479}, {480, 240}} {
		if !covered(c[0], c[1]) {
			t.Errorf("no tile covers %v", c)
		}
	}
	// Bengaluru (12.97°N 77.59°E) is in tile x=22, y=14 of zoom 5.
	z5 := NewMap([]MapPoint{{ID: "b", Latitude: "12.9716", Longitude: "77.5946"}}, MapOptions{TileURL: "https://t/{z}/{x}/{y}"})
	if !strings.HasPrefix(z5.Tiles[0].URL, "https://t/10/") {
		t.Errorf("one point is shown at zoom 10, got %s", z5.Tiles[0].URL)
	}
	found := false
	for _, tl := range z5.Tiles {
		if tl.URL == "https://t/10/732/474" { // the tile holding Bengaluru at zoom 10
			found = true
			p := z5.Points[0]
			if p.X < tl.X || p.X > tl.X+tl.Size || p.Y < tl.Y || p.Y > tl.Y+tl.Size {
				t.Errorf("Bengaluru at %.0f,%.0f is not on its tile at %.0f,%.0f", p.X, p.Y, tl.X, tl.Y)
			}
		}
	}
	if !found {
		t.Errorf("tile 10/732/474 missing: %v", z5.Tiles)
	}

	empty := NewMap(nil, MapOptions{})
	if !empty.Empty() || len(empty.Grid) == 0 {
		t.Error("an empty map has no grid")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestFormatting(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "never"}, {now.Add(-5 * time.Second), "just now"}, {now.Add(-45 * time.Second), "45 s ago"},
		{now.Add(-3 * time.Minute), "3 min ago"}, {now.Add(-5 * time.Hour), "5 h ago"}, {now.Add(-72 * time.Hour), "3 d ago"},
		{now.Add(90 * time.Second), "in 1 min"},
	} {
		if got := Ago(tc.t, now); got != tc.want {
			t.Errorf("Ago(%v) = %q, want %q", now.Sub(tc.t), got, tc.want)
		}
	}
	if got := TitleCase("party_clientinfo_push"); got != "Party Clientinfo Push" {
		t.Errorf("titleCase = %q", got)
	}
	if Tone("CONNECTED") != "ok" || Tone("OFFLINE") != "bad" || Tone("whatever") != "muted" {
		t.Error("tones")
	}
	if got := WithQuery("/parties", map[string][]string{"status": {"CONNECTED"}, "page": {"3"}}, "role", "CPO"); got != "/parties?role=CPO&status=CONNECTED" {
		t.Errorf("a filter change keeps the page: %q", got)
	}
	if got := WithQuery("/parties", map[string][]string{"status": {"CONNECTED"}}, "page", "2"); got != "/parties?page=2&status=CONNECTED" {
		t.Errorf("paging drops the filter: %q", got)
	}
	for _, p := range []string{"/parties", "/jobs/3?x=1"} {
		if !SafePath(p) {
			t.Errorf("SafePath(%q) = false", p)
		}
	}
	for _, p := range []string{"", "//evil.example", "https://evil.example", "/\\evil", "/../admin", "parties"} {
		if SafePath(p) {
			t.Errorf("SafePath(%q) = true", p)
		}
	}
}

func TestPaginate(t *testing.T) {
	t.Parallel()
	items := make([]int, 60)
	for i := range items {
		items[i] = i
	}
	r := httptest.NewRequest("GET", "/console/parties?status=CONNECTED&page=2", nil)
	page, p := Paginate(r, items, 25)
	if len(page) != 25 || page[0] != 25 || p.From != 26 || p.To != 50 || p.Total != 60 {
		t.Errorf("page 2: %v %+v", page[:1], p)
	}
	if p.Prev != "/parties?page=1&status=CONNECTED" || p.Next != "/parties?page=3&status=CONNECTED" || p.First != "/parties?status=CONNECTED" {
		t.Errorf("links: %+v", p)
	}
	r = httptest.NewRequest("GET", "/console/parties?page=99", nil)
	if page, p := Paginate(r, items, 25); len(page) != 10 || p.Next != "" || p.From != 51 {
		t.Errorf("past the end: %d items, %+v", len(page), p)
	}
	if page, p := Paginate(httptest.NewRequest("GET", "/console/parties", nil), []int(nil), 25); len(page) != 0 || p.From != 0 || p.Next != "" {
		t.Errorf("empty: %+v", p)
	}
}
