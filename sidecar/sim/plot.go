package sim

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
)

// WriteCDF writes an SVG picture of each result's JCT distribution: the
// fraction of jobs finished within x, x on a log scale.
func WriteCDF(w io.Writer, results []Result) error {
	const (
		width, height = 800, 500
		left, right   = 70, 180
		top, bottom   = 20, 50
	)
	lo, hi := math.Inf(1), 0.0
	for _, r := range results {
		if len(r.JCTs) > 0 {
			lo = math.Min(lo, math.Max(r.JCTs[0], 1))
			hi = math.Max(hi, r.JCTs[len(r.JCTs)-1])
		}
	}
	if math.IsInf(lo, 1) || hi <= lo {
		lo, hi = 1, 10
	}
	l0, l1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	x := func(v float64) float64 { return left + (math.Log10(math.Max(v, lo))-l0)/(l1-l0)*pw }
	y := func(f float64) float64 { return top + (1-f)*ph }
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	for e := l0; e <= l1; e++ {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/><text x="%.1f" y="%d" text-anchor="middle">1e%d s</text>`+"\n",
			x(math.Pow(10, e)), top, x(math.Pow(10, e)), height-bottom, x(math.Pow(10, e)), height-bottom+18, int(e))
	}
	for f := 0.0; f <= 1.0001; f += 0.25 {
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%.0f%%</text>`+"\n",
			left, y(f), width-right, y(f), left-6, y(f)+4, 100*f)
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">job completion time</text>`+"\n", left+int(pw)/2, height-10)
	colors := []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}
	for i, r := range results {
		c := colors[i%len(colors)]
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="`, c)
		n := len(r.JCTs)
		step := max(1, n/400)
		for k := 0; k < n; k += step {
			fmt.Fprintf(b, "%.1f,%.1f ", x(r.JCTs[k]), y(float64(k+1)/float64(n)))
		}
		if n > 0 {
			fmt.Fprintf(b, "%.1f,%.1f", x(r.JCTs[n-1]), y(1))
		}
		fmt.Fprint(b, "\"/>\n")
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/><text x="%d" y="%d">%s</text>`+"\n",
			width-right+10, top+10+18*i, width-right+30, top+10+18*i, c, width-right+36, top+14+18*i, html.EscapeString(r.Policy))
	}
	fmt.Fprintln(b, "</svg>")
	return b.Flush()
}
