package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress reports long stages on stderr: a bar redrawn in place on a
// terminal, plain lines every few seconds otherwise, nothing with --quiet.
// A stage that ends within a second prints nothing. It is safe for
// concurrent use: callbacks may come from any goroutine.
type progress struct {
	w     io.Writer
	quiet bool
	tty   bool
	now   func() time.Time
	// stopped reports whether the run was interrupted; a stage that ends
	// then says so rather than "done".
	stopped func() bool

	mu    sync.Mutex
	label string
	start time.Time
	last  time.Time // last output
	shown bool      // whether anything of this stage was printed
}

const (
	progressDelay = time.Second // silence before the first report
	barInterval   = 100 * time.Millisecond
	lineInterval  = 5 * time.Second // between plain lines
	barWidth      = 30
)

func newProgress(w io.Writer, quiet bool) *progress {
	return &progress{w: w, quiet: quiet, tty: isTerminal(w), now: time.Now}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// begin starts a stage and returns its callback, which takes the work done
// and the total.
func (p *progress) begin(label string) func(done, total int) {
	p.mu.Lock()
	p.label, p.start, p.last, p.shown = label, p.now(), time.Time{}, false
	p.mu.Unlock()
	return p.update
}

func (p *progress) update(done, total int) {
	if p.quiet || total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	elapsed := now.Sub(p.start)
	if elapsed < progressDelay {
		return
	}
	every := lineInterval
	if p.tty {
		every = barInterval
	}
	if p.shown && now.Sub(p.last) < every || done >= total && !p.tty {
		// The last step of a stage is left to end's "done" line.
		return
	}
	frac := min(float64(done)/float64(total), 1)
	eta := "?"
	if done > 0 {
		eta = roundDur(time.Duration(float64(elapsed) * (1 - frac) / frac)).String()
	}
	if p.tty {
		n := int(frac * barWidth)
		bar := strings.Repeat("=", n) + strings.Repeat(" ", barWidth-n)
		fmt.Fprintf(p.w, "\r\033[K%s [%s] %3.0f%%  %s left", p.label, bar, 100*frac, eta)
	} else {
		fmt.Fprintf(p.w, "vecbench: %s: %.0f%% (%d/%d), about %s left\n", p.label, 100*frac, done, total, eta)
	}
	p.last, p.shown = now, true
}

// end closes the current stage, saying how long it took if it was shown.
func (p *progress) end() {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.shown {
		return
	}
	took := roundDur(p.now().Sub(p.start))
	verb := "done in"
	if p.stopped != nil && p.stopped() {
		verb = "stopped after"
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s: %s %s\n", p.label, verb, took)
	} else {
		fmt.Fprintf(p.w, "vecbench: %s: %s %s\n", p.label, verb, took)
	}
	p.shown = false
}

// note prints one line of information (not progress) unless quiet.
func (p *progress) note(format string, args ...any) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "vecbench: "+format+"\n", args...)
}

func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
