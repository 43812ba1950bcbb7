package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// table prints a Markdown table row by row, so that an interrupted run has
// already shown what it measured. The header goes out with the first row.
type table struct {
	w       io.Writer
	title   string
	header  []string
	right   []bool // right-align the column (numbers)
	started bool
	rows    int
}

func newTable(w io.Writer, title string, cols ...string) *table {
	t := &table{w: w, title: title}
	for _, c := range cols {
		// A leading '<' marks a left-aligned (text) column.
		name, left := strings.CutPrefix(c, "<")
		t.header = append(t.header, name)
		t.right = append(t.right, !left)
	}
	return t
}

func (t *table) row(cells ...string) {
	if !t.started {
		fmt.Fprintf(t.w, "%s\n\n| %s |\n|", t.title, strings.Join(t.header, " | "))
		for _, r := range t.right {
			if r {
				fmt.Fprint(t.w, "--:|")
			} else {
				fmt.Fprint(t.w, "---|")
			}
		}
		fmt.Fprintln(t.w)
		t.started = true
	}
	fmt.Fprintf(t.w, "| %s |\n", strings.Join(cells, " | "))
	t.rows++
}

// close ends the table with a blank line, if it printed anything.
func (t *table) close() {
	if t.started {
		fmt.Fprintln(t.w)
		t.started = false
	}
}

// fmtDur prints a duration with three significant digits in a unit that
// suits it: "85.2 µs", "1.23 ms", "12.3 s".
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Millisecond:
		return sig3(float64(d)/1e3) + " µs"
	case d < time.Second:
		return sig3(float64(d)/1e6) + " ms"
	case d < 100*time.Minute:
		return sig3(d.Seconds()) + " s"
	}
	return d.Round(time.Minute).String()
}

func sig3(x float64) string {
	switch {
	case x >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case x >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// fmtBytes prints a byte count in binary units.
func fmtBytes(b int64) string {
	if b <= 0 {
		return "–"
	}
	// A unit up from 1,000 of the one below, so that three digits do:
	// 1,005 KiB reads 0.98 MiB.
	const unit = 1024
	if b < 1000 {
		return fmt.Sprintf("%d B", b)
	}
	x := float64(b)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		x /= unit
		if x < 1000 {
			return sig3(x) + " " + u
		}
	}
	return sig3(x) + " PiB"
}

// fmtInt prints n with thousands separators: 100000 → "100,000".
func fmtInt(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + fmtInt(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// fmtQPS prints queries per second without a fraction.
func fmtQPS(q float64) string {
	if q <= 0 {
		return "–"
	}
	if q < 10 {
		return strconv.FormatFloat(q, 'f', 1, 64)
	}
	return fmtInt(int(q + 0.5))
}

func fmtRecall(r float64) string { return strconv.FormatFloat(r, 'f', 3, 64) }
