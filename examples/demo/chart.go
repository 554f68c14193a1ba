package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/adk-contextguard/contextguard"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

var (
	colSent    = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colBuilt   = color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}
	colWindow  = color.RGBA{R: 0xc0, G: 0x1c, B: 0x28, A: 0xff}
	colTrigger = color.RGBA{R: 0xe6, G: 0x8a, B: 0x00, A: 0xff}
	colCompact = color.RGBA{R: 0x8e, G: 0x24, B: 0xaa, A: 0xff}
)

// writeChart draws tokens per model call against the window and the
// trigger, with compactions marked, to path: SVG when path ends in .svg,
// PNG otherwise.
func writeChart(r *report, path string) error {
	if len(r.Steps) == 0 {
		return fmt.Errorf("chart: %w", errNoSteps)
	}
	p, err := chart(r)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("chart: %w", err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	const w, h = 12 * vg.Inch, 6 * vg.Inch
	var wt io.WriterTo
	if strings.EqualFold(filepath.Ext(path), ".svg") {
		c := vgsvg.New(w, h)
		p.Draw(draw.New(c))
		wt = c
	} else {
		c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(110))
		p.Draw(draw.New(c))
		wt = vgimg.PngCanvas{Canvas: c}
	}
	if _, err := wt.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("chart %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return nil
}

// sans is the chart's typeface (gonum's embedded Liberation Sans).
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

func chart(r *report) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("contextguard demo: prompt tokens per model call (window %s tokens)", thousands(r.Window))
	p.Title.TextStyle.Font = font.From(sans, 15)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = "model call (step); shaded bands are the user's turns, T1 to T" + fmt.Sprint(r.Steps[len(r.Steps)-1].Turn)
	p.Y.Label.Text = "prompt tokens"
	p.X.Label.TextStyle.Font = font.From(sans, 12)
	p.Y.Label.TextStyle.Font = font.From(sans, 12)
	p.X.Tick.Label.Font = font.From(sans, 9)
	p.Y.Tick.Label.Font = font.From(sans, 10)
	p.X.Tick.Marker = stepTicks{turnStarts: turnStarts(r)}
	p.Y.Tick.Marker = thousandsTicks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)

	n := len(r.Steps)
	xmin, xmax := 0.5, float64(n)+0.5
	top := float64(r.Window) * 1.6

	// The user's turns as alternating bands.
	for t, first := 0, 0; first < n; t++ {
		last := first
		for last+1 < n && r.Steps[last+1].Turn == r.Steps[first].Turn {
			last++
		}
		if t%2 == 1 {
			band, err := plotter.NewPolygon(plotter.XYs{
				{X: float64(first) + 0.5, Y: 0}, {X: float64(last) + 1.5, Y: 0},
				{X: float64(last) + 1.5, Y: top}, {X: float64(first) + 0.5, Y: top},
			})
			if err != nil {
				return nil, err
			}
			band.Color = color.Gray{Y: 0xf0}
			band.LineStyle.Width = 0
			p.Add(band)
		}
		first = last + 1
	}

	built := make(plotter.XYs, n)
	sent := make(plotter.XYs, n)
	for i, s := range r.Steps {
		built[i] = plotter.XY{X: float64(s.Step), Y: float64(s.Built)}
		sent[i] = plotter.XY{X: float64(s.Step), Y: float64(s.tokens())}
	}

	// Without the guard: what ADK built, clipped at the top of the chart.
	bl, err := plotter.NewLine(built)
	if err != nil {
		return nil, err
	}
	bl.Color, bl.Width, bl.Dashes = colBuilt, vg.Points(1.5), []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(bl)
	label := fmt.Sprintf("without the guard: the request ADK built (up to %s)", kilo(r.MaxBuilt))
	if float64(r.MaxBuilt) > top {
		label = fmt.Sprintf("without the guard: the request ADK built (up to %s, off the chart)", kilo(r.MaxBuilt))
	}
	p.Legend.Add(label, bl)

	hline := func(y float64, c color.Color, dashes []vg.Length, label string) error {
		l, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: y}, {X: xmax, Y: y}})
		if err != nil {
			return err
		}
		l.Color, l.Width, l.Dashes = c, vg.Points(2), dashes
		p.Add(l)
		p.Legend.Add(label, l)
		return nil
	}
	if err := hline(float64(r.Window), colWindow, nil, "context window ("+thousands(r.Window)+")"); err != nil {
		return nil, err
	}
	if err := hline(float64(r.Trigger), colTrigger, []vg.Length{vg.Points(8), vg.Points(4)}, "compaction trigger ("+thousands(r.Trigger)+")"); err != nil {
		return nil, err
	}

	// Compactions: a drop from the guard's count of the request before
	// compaction to the request sent.
	var marks plotter.XYs
	var notes plotter.XYLabels
	for _, s := range r.Steps {
		ev := s.Compaction
		if ev == nil {
			continue
		}
		before := min(float64(ev.TokensBefore), top)
		drop, err := plotter.NewLine(plotter.XYs{{X: float64(s.Step), Y: before}, {X: float64(s.Step), Y: float64(s.tokens())}})
		if err != nil {
			return nil, err
		}
		drop.Color, drop.Width, drop.Dashes = colCompact, vg.Points(1.5), []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(drop)
		marks = append(marks, plotter.XY{X: float64(s.Step), Y: before})
		notes.XYs = append(notes.XYs, plotter.XY{X: float64(s.Step), Y: labelY(before, top, float64(r.Window), float64(r.Trigger))})
		what := "compacted"
		switch {
		case ev.Fallback:
			what = "fallback"
		case ev.Reason == contextguard.ReasonRequested:
			what = "on request"
		}
		notes.Labels = append(notes.Labels, fmt.Sprintf("%s %s→%s", what, kilo(ev.TokensBefore), kilo(ev.TokensAfter)))
	}

	sl, sp, err := plotter.NewLinePoints(sent)
	if err != nil {
		return nil, err
	}
	sl.Color, sl.Width = colSent, vg.Points(2.5)
	sp.Color, sp.Shape, sp.Radius = colSent, draw.CircleGlyph{}, vg.Points(2.5)
	p.Add(sl, sp)
	p.Legend.Add("sent: prompt tokens the model received", sl, sp)

	if len(marks) > 0 {
		sc, err := plotter.NewScatter(marks)
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape, sc.Radius = colCompact, draw.PyramidGlyph{}, vg.Points(5)
		p.Add(sc)
		p.Legend.Add(fmt.Sprintf("compaction (%d): the guard's count before, then the request sent", len(marks)), sc)
		lb, err := plotter.NewLabels(notes)
		if err != nil {
			return nil, err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Font = font.From(sans, 9)
			lb.TextStyle[i].Color = colCompact
			lb.TextStyle[i].XAlign = draw.XCenter
		}
		lb.Offset = vg.Point{Y: vg.Points(9)}
		p.Add(lb)
	}

	// Fix the ranges last: Add widens them to the data.
	p.X.Min, p.X.Max = xmin, xmax
	p.Y.Min, p.Y.Max = 0, top

	p.Legend.Top, p.Legend.Left = true, false
	p.Legend.TextStyle.Font = font.From(sans, 10)
	p.Legend.Padding = vg.Points(3)
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(8), -vg.Points(6)
	p.Legend.ThumbnailWidth = vg.Points(28)
	return p, nil
}

// Where a compaction's label goes, in points of the 6-inch chart (about
// 350 points of plot area): labelOffset above its anchor, labelHeight tall,
// and at least labelClearance clear of the window and trigger lines, so no
// label is drawn across a line.
const (
	plotAreaPoints = 350
	labelOffset    = 9
	labelHeight    = 11
	labelClearance = 3
)

// labelY is the anchor of the label of a compaction whose mark is at y:
// the mark itself, unless the label would cross one of lines; it then sits
// just above that line, or just below it when there is no room above.
func labelY(y, top float64, lines ...float64) float64 {
	u := top / plotAreaPoints // data units per point
	for range len(lines) + 1 {
		moved := false
		for _, l := range lines {
			lo, hi := y+labelOffset*u, y+(labelOffset+labelHeight)*u
			if l < lo-labelClearance*u || l > hi+labelClearance*u {
				continue
			}
			y = l + (labelClearance-labelOffset)*u
			if y+(labelOffset+labelHeight)*u > top {
				y = l - (labelOffset+labelHeight+labelClearance)*u
			}
			moved = true
		}
		if !moved {
			break
		}
	}
	return y
}

// turnStarts maps the first step of each user turn to the turn's number.
func turnStarts(r *report) map[int]int {
	starts := map[int]int{}
	for i, s := range r.Steps {
		if i == 0 || r.Steps[i-1].Turn != s.Turn {
			starts[s.Step] = s.Turn
		}
	}
	return starts
}

// stepTicks labels every step (every fifth on long runs), and the first
// step of each user turn with the turn's number below it.
type stepTicks struct{ turnStarts map[int]int }

// Ticks returns a tick per step.
func (st stepTicks) Ticks(min, max float64) []plot.Tick {
	every := 1
	if max-min > 40 {
		every = 5
	}
	var ticks []plot.Tick
	for s := int(math.Ceil(min)); float64(s) <= max; s++ {
		t := plot.Tick{Value: float64(s)}
		if s%every == 0 || every == 1 {
			t.Label = fmt.Sprint(s)
		}
		if turn, ok := st.turnStarts[s]; ok {
			t.Label += "\nT" + fmt.Sprint(turn)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// thousandsTicks labels the token axis as 0, 4k, 8k, ...
type thousandsTicks struct{}

// Ticks returns the default ticks with "k" labels.
func (thousandsTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		switch {
		case ticks[i].Label == "":
		case ticks[i].Value == 0:
			ticks[i].Label = "0"
		default:
			ticks[i].Label = fmt.Sprintf("%gk", ticks[i].Value/1000)
		}
	}
	return ticks
}
