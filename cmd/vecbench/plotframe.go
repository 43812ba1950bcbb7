// This file holds what every plot of vecbench shares: the page (SVG or PNG
// by the file's extension), a title and a subtitle naming the data and
// the machine, the legend in a column of its own, and the styles that
// keep series apart in print.

package main

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/cairndb/cairn/recall"
)

// sans is the plots' typeface: Liberation Sans, which gonum/plot embeds.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

func textStyle(size vg.Length, c color.Color) text.Style {
	return text.Style{Font: font.From(sans, size), Color: c, Handler: plot.DefaultTextHandler}
}

// newPlot is a plot in the house style: sans-serif text, light grid.
func newPlot() *plot.Plot {
	p := plot.New()
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 11)
		a.Tick.Label.Font = font.From(sans, 9.5)
	}
	p.Title.TextStyle.Font = font.From(sans, 12)
	p.Title.Padding = vg.Points(8)
	grid := plotterGrid()
	p.Add(grid)
	return p
}

// page is one figure: a title and subtitle across the top, then panels
// side by side, then the legend in a column on the right.
type page struct {
	title    string
	subtitle []string // one line each
	panels   []*plot.Plot
	legend   *plot.Legend // nil for none
	width    vg.Length
	height   vg.Length
}

// save draws the page and writes it to path as SVG or PNG.
func (pg *page) save(path string) error {
	var c vg.CanvasWriterTo
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(pg.width, pg.height), vgimg.UseDPI(144))}
	case ".svg":
		c = vgsvg.New(pg.width, pg.height)
	default:
		return fmt.Errorf("%s: want a .svg or .png file", path)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	pad := vg.Points(10)
	body := draw.Crop(dc, pad, -pad, pad/2, -pad)

	// Title and subtitle, left-aligned.
	ts := textStyle(15, color.Black)
	ss := textStyle(10, color.Gray{Y: 0x55})
	y := body.Max.Y - ts.Height(pg.title)
	body.FillText(ts, vg.Point{X: body.Min.X, Y: y}, pg.title)
	for _, line := range wrap(ss, pg.subtitle, body.Size().X) {
		y -= ss.Height(line) * 1.25
		body.FillText(ss, vg.Point{X: body.Min.X, Y: y}, line)
	}
	body = draw.Crop(body, 0, 0, 0, -(body.Max.Y - y + vg.Points(8)))

	if pg.legend != nil {
		w := pg.legend.Rectangle(body).Size().X*fontSlack + vg.Points(16)
		lc := draw.Crop(body, body.Size().X-w+vg.Points(16), 0, 0, -vg.Points(24))
		pg.legend.Draw(lc)
		body = draw.Crop(body, 0, -w, 0, 0)
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(pg.panels), PadX: vg.Points(24)}
	canvases := plot.Align([][]*plot.Plot{pg.panels}, tiles, body)
	for i, p := range pg.panels {
		p.Draw(canvases[0][i])
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return err
	}
	out := buf.Bytes()
	if _, ok := c.(*vgsvg.Canvas); ok {
		// SVG names the font without embedding it; Liberation Sans has
		// Arial's metrics, so a viewer without it keeps the layout.
		out = bytes.ReplaceAll(out, []byte("font-family:Liberation Sans;"), []byte("font-family:Liberation Sans,Arial,Helvetica,sans-serif;"))
	}
	return recall.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(out)
		return err
	})
}

// fontSlack is how much wider than Liberation Sans's metrics say text is
// given room for: an SVG names its font without embedding it, and a viewer
// without Liberation Sans or Arial draws a wider one (DejaVu Sans is about
// a tenth wider), which must stay inside the frame too.
const fontSlack = 1.15

// wrap breaks each line wider than width (with fontSlack) at its " · "
// separators, as few times as it can.
func wrap(sty text.Style, lines []string, width vg.Length) []string {
	var out []string
	for _, line := range lines {
		parts := strings.Split(line, " · ")
		cur := parts[0]
		for _, p := range parts[1:] {
			if next := cur + " · " + p; sty.Width(next)*fontSlack <= width {
				cur = next
				continue
			}
			out = append(out, cur)
			cur = p
		}
		out = append(out, cur)
	}
	return out
}

// newLegend is a legend for the column at the right of a page.
func newLegend() *plot.Legend {
	l := plot.NewLegend()
	l.TextStyle = textStyle(10, color.Black)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(24)
	l.Padding = vg.Points(3)
	return &l
}

// seriesStyle is the look of the i-th series: a colour, a marker shape
// (so that series differ in black and white too) and, for peers, dashes.
type seriesStyle struct {
	color  color.Color
	shape  draw.GlyphDrawer
	dashes []vg.Length
}

func styleOf(i int, peer bool) seriesStyle {
	s := seriesStyle{color: plotutil.Color(i), shape: plotutil.Shape(i)}
	if peer {
		s.dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return s
}

// faint is c mixed with two parts of white, for dominated points: still
// legible, clearly behind the fronts.
func faint(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(x uint32) uint8 { return uint8(((x >> 8) + 0xff*2) / 3) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 0xff}
}

// machineLine is the subtitle's line about where and when a run happened.
func machineLine(m machine) string {
	return fmt.Sprintf("%s, %d cores · cairn commit %s · %s · %s", m.CPU, m.Cores, m.Commit, m.Go, m.Date)
}
