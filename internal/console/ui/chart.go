package ui

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Chart is a small server-rendered SVG chart of one or more series over the
// same labels: per-day counts (sessions per day), amounts (energy per day,
// captured money) or categories (payment outcomes). Values are integers in
// a base unit (Wh, paise, a count); Scale and Decimals say how they read
// (1000 and 1 for kWh from Wh, 100 and 2 for rupees from paise), so no
// amount is ever a float.
type Chart struct {
	Title  string
	Labels []string // one per x position (days, categories)
	Series []Series
	// Kind is "bar" (grouped bars, the default), "stacked" or "line".
	Kind string
	// Unit follows the values ("kWh", "₹", "").
	Unit     string
	Scale    int64
	Decimals int
	// Width and Height of the SVG (default 640 × 220); it scales to its box.
	Width, Height int
}

// Series is one named row of values, one per label. Negative values count
// as zero.
type Series struct {
	Name   string
	Values []int64
}

// DailyLabels returns the labels of n days ending with the day of last, in
// loc: "Mar 4".
func DailyLabels(last time.Time, n int, loc *time.Location) []string {
	if loc == nil {
		loc = time.UTC
	}
	d := last.In(loc)
	out := make([]string, n)
	for i := n - 1; i >= 0; i-- {
		out[i] = d.Format("Jan 2")
		d = d.AddDate(0, 0, -1)
	}
	return out
}

// ChartView is a chart laid out for the "chart" template.
type ChartView struct {
	Title         string
	Unit          string
	Width, Height int
	Bars          []ChartBar
	Lines         []ChartLine
	YTicks        []ChartTick
	XLabels       []ChartTick
	Legend        []ChartLegend
	// PlotX, PlotY, PlotW, PlotH frame the plot area.
	PlotX, PlotY, PlotW, PlotH float64
	Empty                      bool
	// Table is the chart's data as text, for screen readers and copying.
	Table [][]string
}

// ChartBar is one bar.
type ChartBar struct {
	X, Y, W, H float64
	Series     int
	Title      string
}

// ChartLine is one series drawn as a line, with its points.
type ChartLine struct {
	Series int
	Points string // "x,y x,y …"
	Dots   []ChartBar
}

// ChartTick is an axis label.
type ChartTick struct {
	X, Y  float64
	Label string
}

// ChartLegend names a series.
type ChartLegend struct {
	Series int
	Name   string
}

// Right is the x of the plot area's right edge.
func (v ChartView) Right() float64 { return v.PlotX + v.PlotW }

// ViewBox is the SVG viewBox attribute.
func (v ChartView) ViewBox() string { return fmt.Sprintf("0 0 %d %d", v.Width, v.Height) }

// format writes a value in the chart's unit.
func (c Chart) format(v int64) string {
	s := Scaled(v, max(c.Scale, 1), c.Decimals)
	if c.Unit != "" {
		s += " " + c.Unit
	}
	return s
}

// View lays the chart out.
func (c Chart) View() ChartView {
	w, h := c.Width, c.Height
	if w <= 0 || h <= 0 {
		w, h = 640, 220
	}
	v := ChartView{Title: c.Title, Unit: c.Unit, Width: w, Height: h}
	const left, right, top, bottom = 56.0, 12.0, 12.0, 28.0
	v.PlotX, v.PlotY, v.PlotW, v.PlotH = left, top, float64(w)-left-right, float64(h)-top-bottom
	n := len(c.Labels)
	var maxV int64
	for i := 0; i < n; i++ {
		var stack int64
		for _, s := range c.Series {
			val := valueAt(s, i)
			stack += val
			if c.Kind != "stacked" {
				maxV = max(maxV, val)
			}
		}
		if c.Kind == "stacked" {
			maxV = max(maxV, stack)
		}
	}
	v.Table = append(v.Table, append([]string{""}, c.Labels...))
	for i, s := range c.Series {
		v.Legend = append(v.Legend, ChartLegend{Series: i % 6, Name: s.Name})
		row := []string{s.Name}
		for j := 0; j < n; j++ {
			row = append(row, c.format(valueAt(s, j)))
		}
		v.Table = append(v.Table, row)
	}
	if n == 0 || len(c.Series) == 0 {
		v.Empty = true
		return v
	}
	top1, step := niceScale(maxV, max(c.Scale, 1))
	yOf := func(val int64) float64 {
		return round1(v.PlotY + v.PlotH - float64(val)/float64(top1)*v.PlotH)
	}
	for t := int64(0); t <= top1; t += step {
		v.YTicks = append(v.YTicks, ChartTick{X: left - 6, Y: yOf(t), Label: Scaled(t, max(c.Scale, 1), tickDecimals(step, max(c.Scale, 1)))})
	}
	slot := v.PlotW / float64(n)
	every := int(math.Ceil(float64(n) / (v.PlotW / 56))) // a label every ~56 units
	for i, l := range c.Labels {
		if i%every == 0 {
			v.XLabels = append(v.XLabels, ChartTick{X: round1(left + slot*(float64(i)+0.5)), Y: float64(h) - 8, Label: l})
		}
	}
	switch c.Kind {
	case "line":
		for si, s := range c.Series {
			line := ChartLine{Series: si % 6}
			var pts []string
			for i := 0; i < n; i++ {
				x, y := round1(left+slot*(float64(i)+0.5)), yOf(valueAt(s, i))
				pts = append(pts, fmt.Sprintf("%g,%g", x, y))
				line.Dots = append(line.Dots, ChartBar{X: x, Y: y, Series: si % 6, Title: s.Name + " · " + c.Labels[i] + ": " + c.format(valueAt(s, i))})
			}
			line.Points = strings.Join(pts, " ")
			v.Lines = append(v.Lines, line)
		}
	case "stacked":
		bw := slot * 0.7
		for i := 0; i < n; i++ {
			var base int64
			for si, s := range c.Series {
				val := valueAt(s, i)
				y0, y1 := yOf(base), yOf(base+val)
				base += val
				if val == 0 {
					continue
				}
				v.Bars = append(v.Bars, ChartBar{X: round1(left + slot*float64(i) + (slot-bw)/2), Y: y1, W: round1(bw), H: round1(y0 - y1),
					Series: si % 6, Title: s.Name + " · " + c.Labels[i] + ": " + c.format(val)})
			}
		}
	default:
		group := slot * 0.75
		bw := group / float64(len(c.Series))
		for i := 0; i < n; i++ {
			for si, s := range c.Series {
				val := valueAt(s, i)
				y := yOf(val)
				v.Bars = append(v.Bars, ChartBar{X: round1(left + slot*float64(i) + (slot-group)/2 + bw*float64(si)), Y: y, W: round1(bw * 0.92),
					H: round1(v.PlotY + v.PlotH - y), Series: si % 6, Title: s.Name + " · " + c.Labels[i] + ": " + c.format(val)})
			}
		}
	}
	return v
}

func valueAt(s Series, i int) int64 {
	if i < len(s.Values) && s.Values[i] > 0 {
		return s.Values[i]
	}
	return 0
}

// niceScale returns the top of the y axis and the tick step: the smallest
// 1-2-5 step (in base units) giving at most five intervals up to maxV.
func niceScale(maxV, scale int64) (top, step int64) {
	if maxV <= 0 {
		return scale, scale
	}
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if s := p * m; (maxV+s-1)/s <= 5 {
				return (maxV + s - 1) / s * s, s
			}
		}
	}
}

// tickDecimals is how many decimals a tick step needs in display units.
func tickDecimals(step, scale int64) int {
	d := 0
	for s := scale; s > 1 && step%s != 0 && d < 6; s /= 10 {
		d++
	}
	return d
}
