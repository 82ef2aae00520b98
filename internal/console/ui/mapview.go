package ui

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// MapPoint is a thing on the map: a location, a charger.
type MapPoint struct {
	ID     string
	Name   string
	Status string // coloured by tone
	// Latitude and Longitude are OCPI decimal strings ("12.971599").
	Latitude, Longitude string
	// Href is the console path of its page, if any.
	Href string
	// Detail is a second line for the tooltip (an address).
	Detail string
}

// MapOptions size the map and name optional tiles.
type MapOptions struct {
	Width, Height int // in SVG units (default 960 × 480); the SVG scales to its box
	// TileURL is a slippy-map tile template with {z}, {x} and {y}; empty:
	// no tiles, the coordinate grid alone (works offline).
	TileURL string
	// Attribution is shown under tiles (their licence usually requires it).
	Attribution string
}

// MapView is a map ready for the "map" template: points projected with Web
// Mercator (so tiles line up), a coordinate grid, optional tiles.
type MapView struct {
	Width, Height int
	Points        []MapDot
	Grid          []GridLine
	Tiles         []MapTile
	Legend        []LegendItem
	// Skipped counts points without valid coordinates (listed nowhere on
	// the map; the page's table still has them).
	Skipped     int
	Attribution string
}

// MapDot is a projected point.
type MapDot struct {
	MapPoint
	X, Y float64
	Tone string
}

// GridLine is a meridian or parallel with its label.
type GridLine struct {
	X1, Y1, X2, Y2 float64
	Label          string
	LX, LY         float64
	Vertical       bool
}

// MapTile is a tile image placed on the map.
type MapTile struct {
	URL        string
	X, Y, Size float64
}

// LegendItem counts the points of one status.
type LegendItem struct {
	Status string
	Tone   string
	Count  int
}

// Empty reports whether the map has nothing to show.
func (m MapView) Empty() bool { return len(m.Points) == 0 }

// ViewBox is the SVG viewBox attribute.
func (m MapView) ViewBox() string { return fmt.Sprintf("0 0 %d %d", m.Width, m.Height) }

const (
	maxMercatorLat = 85.05112878
	maxZoom        = 17
)

// mercator projects a coordinate to the unit square (0,0 top left).
func mercator(lat, lon float64) (x, y float64) {
	lat = math.Max(-maxMercatorLat, math.Min(maxMercatorLat, lat))
	x = (lon + 180) / 360
	s := math.Sin(lat * math.Pi / 180)
	y = 0.5 - math.Log((1+s)/(1-s))/(4*math.Pi)
	return x, y
}

// inverse of mercator's y.
func latitudeOf(y float64) float64 {
	n := math.Pi - 2*math.Pi*y
	return 180 / math.Pi * math.Atan(math.Sinh(n))
}

// NewMap fits the points into the map: the view centres on them with a
// margin, zoomed in no further than street level; one point or none shows
// a region around it (or the world).
func NewMap(points []MapPoint, opt MapOptions) MapView {
	if opt.Width <= 0 || opt.Height <= 0 {
		opt.Width, opt.Height = 960, 480
	}
	m := MapView{Width: opt.Width, Height: opt.Height}
	type proj struct {
		p    MapPoint
		x, y float64
	}
	var ps []proj
	counts := map[string]int{}
	minX, minY, maxX, maxY := 1.0, 1.0, 0.0, 0.0
	for _, p := range points {
		lat, err1 := strconv.ParseFloat(strings.TrimSpace(p.Latitude), 64)
		lon, err2 := strconv.ParseFloat(strings.TrimSpace(p.Longitude), 64)
		if err1 != nil || err2 != nil || lat < -90 || lat > 90 || lon < -180 || lon > 180 || math.IsNaN(lat) || math.IsNaN(lon) {
			m.Skipped++
			continue
		}
		x, y := mercator(lat, lon)
		ps = append(ps, proj{p, x, y})
		minX, minY, maxX, maxY = math.Min(minX, x), math.Min(minY, y), math.Max(maxX, x), math.Max(maxY, y)
		counts[p.Status]++
	}
	w, h := float64(opt.Width), float64(opt.Height)
	// scale: map pixels per unit of the Mercator square.
	var cx, cy, scale float64
	if len(ps) == 0 {
		cx, cy, scale = 0.5, 0.5, math.Min(w, h)
	} else {
		cx, cy = (minX+maxX)/2, (minY+maxY)/2
		dx, dy := maxX-minX, maxY-minY
		const margin = 0.82 // the points fill 82 % of the box
		scale = math.Min(w*margin/math.Max(dx, 1e-12), h*margin/math.Max(dy, 1e-12))
		// One point, or points a few metres apart: show a town, not a
		// doorstep; never zoom past street level.
		scale = math.Min(scale, 256*math.Exp2(12))
		if len(ps) == 1 || dx+dy < 1e-9 {
			scale = 256 * math.Exp2(10)
		}
		scale = math.Min(scale, 256*math.Exp2(maxZoom))
		scale = math.Max(scale, math.Min(w, h)) // never smaller than the world
	}
	toScreen := func(x, y float64) (float64, float64) {
		return round1((x-cx)*scale + w/2), round1((y-cy)*scale + h/2)
	}
	for _, p := range ps {
		sx, sy := toScreen(p.x, p.y)
		m.Points = append(m.Points, MapDot{MapPoint: p.p, X: sx, Y: sy, Tone: Tone(p.p.Status)})
	}
	// Draw busy points last (on top): sorted by tone severity, then id.
	sort.SliceStable(m.Points, func(i, j int) bool { return toneRank(m.Points[i].Tone) < toneRank(m.Points[j].Tone) })
	for st, n := range counts {
		m.Legend = append(m.Legend, LegendItem{Status: st, Tone: Tone(st), Count: n})
	}
	sort.Slice(m.Legend, func(i, j int) bool { return m.Legend[i].Status < m.Legend[j].Status })

	// The visible square, in Mercator units.
	x0, x1 := cx-w/2/scale, cx+w/2/scale
	y0, y1 := cy-h/2/scale, cy+h/2/scale
	m.Grid = grid(x0, x1, math.Max(y0, 0), math.Min(y1, 1), toScreen, w, h)
	if opt.TileURL != "" {
		m.Tiles = tiles(opt.TileURL, scale, x0, x1, y0, y1, toScreen)
		m.Attribution = opt.Attribution
	}
	return m
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

func toneRank(t string) int {
	switch t {
	case "muted":
		return 0
	case "ok":
		return 1
	case "active":
		return 2
	case "warn":
		return 3
	}
	return 4
}

// gridSteps are the spacings of grid lines, in degrees.
var gridSteps = []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 45, 90}

// grid draws meridians and parallels about every 120 map units.
func grid(x0, x1, y0, y1 float64, toScreen func(x, y float64) (float64, float64), w, h float64) []GridLine {
	lon0, lon1 := x0*360-180, x1*360-180
	lat0, lat1 := latitudeOf(y1), latitudeOf(y0) // y grows southwards
	step := func(span, px float64) float64 {
		want := span * 120 / px
		for _, s := range gridSteps {
			if s >= want {
				return s
			}
		}
		return 90
	}
	var out []GridLine
	ls := step(lon1-lon0, w)
	for lon := math.Ceil(lon0/ls) * ls; lon <= lon1 && lon <= 180; lon += ls {
		if lon < -180 {
			continue
		}
		x, _ := mercator(0, lon)
		sx, _ := toScreen(x, 0)
		out = append(out, GridLine{X1: sx, Y1: 0, X2: sx, Y2: h, Label: degrees(lon, "E", "W", ls), LX: sx + 3, LY: h - 4, Vertical: true})
	}
	as := step(lat1-lat0, h)
	for lat := math.Ceil(lat0/as) * as; lat <= lat1; lat += as {
		if math.Abs(lat) > maxMercatorLat {
			continue
		}
		_, y := mercator(lat, 0)
		_, sy := toScreen(0, y)
		ly := sy - 3
		if ly < 12 {
			ly = sy + 12 // below the line when it runs along the top
		}
		out = append(out, GridLine{X1: 0, Y1: sy, X2: w, Y2: sy, Label: degrees(lat, "N", "S", as), LX: 4, LY: ly})
	}
	return out
}

// degrees labels a grid line: 77.5°E, 12°N, 0°.
func degrees(v float64, pos, neg string, step float64) string {
	decimals := 0
	for s := step; s < 1 && decimals < 4; s *= 10 {
		decimals++
	}
	if math.Abs(v) < step/2 {
		return "0°"
	}
	hemi := pos
	if v < 0 {
		hemi, v = neg, -v
	}
	return strconv.FormatFloat(v, 'f', decimals, 64) + "°" + hemi
}

// tiles covers the view with tiles of the integer zoom just below the
// map's scale (each tile drawn 256–512 units wide).
func tiles(tmpl string, scale, x0, x1, y0, y1 float64, toScreen func(x, y float64) (float64, float64)) []MapTile {
	z := int(math.Floor(math.Log2(scale / 256)))
	z = max(0, min(z, maxZoom))
	n := math.Exp2(float64(z))
	size := scale / n
	var out []MapTile
	for ty := int(math.Floor(math.Max(y0, 0) * n)); float64(ty) < math.Min(y1, 1)*n && ty < int(n); ty++ {
		for tx := int(math.Floor(x0 * n)); float64(tx) < x1*n; tx++ {
			wx := ((tx % int(n)) + int(n)) % int(n) // wrap around the antimeridian
			sx, sy := toScreen(float64(tx)/n, float64(ty)/n)
			url := strings.NewReplacer("{z}", strconv.Itoa(z), "{x}", strconv.Itoa(wx), "{y}", strconv.Itoa(ty)).Replace(tmpl)
			out = append(out, MapTile{URL: url, X: sx, Y: sy, Size: round1(size) + 0.5})
			if len(out) > 64 {
				return out
			}
		}
	}
	return out
}

// SamplePoints are charging locations in Indian cities (sample data).
var SamplePoints = []MapPoint{
	{ID: "LOC-DEL-1", Name: "Connaught Place", Status: "AVAILABLE", Latitude: "28.631451", Longitude: "77.216667", Detail: "New Delhi"},
	{ID: "LOC-DEL-2", Name: "Aerocity", Status: "CHARGING", Latitude: "28.548764", Longitude: "77.121262", Detail: "New Delhi"},
	{ID: "LOC-BOM-1", Name: "Bandra Kurla Complex", Status: "CHARGING", Latitude: "19.066245", Longitude: "72.868393", Detail: "Mumbai"},
	{ID: "LOC-PNQ-1", Name: "Hinjewadi Phase 1", Status: "OUTOFORDER", Latitude: "18.591361", Longitude: "73.738930", Detail: "Pune"},
	{ID: "LOC-BLR-1", Name: "Koramangala", Status: "AVAILABLE", Latitude: "12.935242", Longitude: "77.624480", Detail: "Bengaluru"},
	{ID: "LOC-BLR-2", Name: "Whitefield", Status: "BLOCKED", Latitude: "12.969800", Longitude: "77.749954", Detail: "Bengaluru"},
	{ID: "LOC-MAA-1", Name: "T. Nagar", Status: "AVAILABLE", Latitude: "13.041800", Longitude: "80.233900", Detail: "Chennai"},
	{ID: "LOC-HYD-1", Name: "HITEC City", Status: "INOPERATIVE", Latitude: "17.447340", Longitude: "78.376230", Detail: "Hyderabad"},
	{ID: "LOC-CCU-1", Name: "Salt Lake Sector V", Status: "AVAILABLE", Latitude: "22.572645", Longitude: "88.433512", Detail: "Kolkata"},
	{ID: "LOC-BAD", Name: "Missing coordinates", Status: "UNKNOWN", Latitude: "", Longitude: ""},
}
