package main

import (
	"fmt"
	"image/color"
	"os"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

var (
	burstColor = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	quietColor = color.RGBA{R: 31, G: 119, B: 180, A: 255}
)

// cumulative turns delivery times into a step series: n messages by time t.
func cumulative(times []float64) plotter.XYs {
	s := slices.Clone(times)
	slices.Sort(s)
	xy := make(plotter.XYs, 0, len(s)+1)
	xy = append(xy, plotter.XY{X: 0, Y: 0})
	for i, t := range s {
		xy = append(xy, plotter.XY{X: t, Y: float64(i + 1)})
	}
	return xy
}

func burstPanel(title string, series map[int64][]float64, xmax float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds since the burst was enqueued"
	p.Y.Label.Text = "messages delivered (cumulative, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.X.Min, p.X.Max = 0, xmax
	p.Y.Min, p.Y.Max = 1, burstSize*1.2
	p.Add(plotter.NewGrid())
	var chats []int64
	for c := range series {
		chats = append(chats, c)
	}
	slices.Sort(chats)
	quietLegend := false
	for _, c := range chats {
		xy := cumulative(series[c])[1:] // log scale: drop the origin
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PostStep
		if c == burstChat {
			l.Color, l.Width = burstColor, vg.Points(2.5)
			p.Legend.Add(fmt.Sprintf("chat %d: burst of %d", c, burstSize), l)
		} else {
			l.Color, l.Width = quietColor, vg.Points(1)
			if !quietLegend {
				p.Legend.Add(fmt.Sprintf("%d quiet chats (20 messages each)", quietChats), l)
				quietLegend = true
			}
		}
		p.Add(l)
	}
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(8), vg.Points(8)
	return p, nil
}

// burstChart draws messages delivered per chat over time, codemojex beside
// FIFO, on one image.
func burstChart(path string, cm, ff map[int64][]float64) error {
	xmax := 0.0
	for _, s := range []map[int64][]float64{cm, ff} {
		for _, v := range s {
			if len(v) > 0 {
				xmax = max(xmax, slices.Max(v))
			}
		}
	}
	xmax = xmax*1.05 + 0.5
	limits := fmt.Sprintf("limits %d/s overall, %d/s per chat", benchGlobal, benchChat)
	a, err := burstPanel("codemojex: notifier + lanes + worker ("+limits+")", cm, xmax)
	if err != nil {
		return err
	}
	b, err := burstPanel("FIFO baseline: one list, same limits and senders", ff, xmax)
	if err != nil {
		return err
	}
	img := vgimg.New(vg.Points(1100), vg.Points(420))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(20), PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(12)}
	a.Draw(tiles.At(dc, 0, 0))
	b.Draw(tiles.At(dc, 1, 0))
	return savePNG(img, path)
}

func savePNG(img *vgimg.Canvas, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return f.Close()
}

// weightsChart draws each chat's delivered messages in the steady window.
func weightsChart(path string, chats []int64, counts map[int64]int, heavy int64) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Weighted share: 30 chats with backlogs, global %d/s binding; chat %d at weight 5", benchGlobal, heavy)
	p.Title.Padding = vg.Points(10)
	p.Y.Label.Text = "messages delivered in the steady window"
	p.X.Label.Text = "chat"
	vals := make(plotter.Values, len(chats))
	hv := make(plotter.Values, len(chats))
	names := make([]string, len(chats))
	for i, c := range chats {
		if c == heavy {
			hv[i] = float64(counts[c])
		} else {
			vals[i] = float64(counts[c])
		}
		names[i] = fmt.Sprint(c)
	}
	w := vg.Points(14)
	b1, err := plotter.NewBarChart(vals, w)
	if err != nil {
		return err
	}
	b1.Color, b1.LineStyle.Width = quietColor, 0
	b2, err := plotter.NewBarChart(hv, w)
	if err != nil {
		return err
	}
	b2.Color, b2.LineStyle.Width = burstColor, 0
	p.Add(plotter.NewGrid(), b1, b2)
	p.Legend.Add("weight 1", b1)
	p.Legend.Add("weight 5", b2)
	p.Legend.Top = true
	p.Legend.YOffs = -vg.Points(4)
	top := 0
	for _, v := range counts {
		top = max(top, v)
	}
	p.Y.Min, p.Y.Max = 0, float64(top)*1.2
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 1.2
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	img := vgimg.New(vg.Points(900), vg.Points(400))
	p.Draw(draw.New(img))
	return savePNG(img, path)
}
