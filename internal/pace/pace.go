// Package pace makes background work rest as long as it works, so that it
// takes about half of one core from the queries and writes beside it.
package pace

import "time"

// Pacer rests as long as the work has gone on since its last rest, in
// slices of a few milliseconds (a sleep much shorter than that
// oversleeps). The zero value never rests.
type Pacer struct {
	on    bool
	since time.Time
	now   func() time.Time
	sleep func(time.Duration)
}

// Resting says whether a Pacer made by New(true) rests. Only tests turn
// it off: under the race detector, where the paced work (a background
// calibration, a graph built beside queries) runs some 20 times slower,
// resting as long again left the core of a test that waits for that work
// idle for half of its time (the race_test.go of the root and hnsw). The
// work still runs on its own goroutine beside the queries and writes,
// which is what the race detector checks; plain go test keeps it on.
var Resting = true

// New returns a Pacer that rests if on (and Resting), counting work from
// now.
func New(on bool) *Pacer { return newPacer(on && Resting, time.Now, time.Sleep) }

// newPacer is New on the clock now and sleep, which tests replace.
func newPacer(on bool, now func() time.Time, sleep func(time.Duration)) *Pacer {
	return &Pacer{on: on, since: now(), now: now, sleep: sleep}
}

// Rest sleeps for the time worked since the last rest, once that is at
// least 2 ms.
func (p *Pacer) Rest() {
	if p == nil || !p.on {
		return
	}
	if worked := p.now().Sub(p.since); worked >= 2*time.Millisecond {
		p.sleep(worked)
		p.since = p.now()
	}
}

// Progress returns a progress report (done of total) that reports to
// next, if not nil, and then rests: a build by one worker that reports
// through it takes about half of one core.
func Progress(next func(done, total int)) func(done, total int) {
	return progress(next, New(true))
}

// progress is Progress resting with p.
func progress(next func(done, total int), p *Pacer) func(done, total int) {
	return func(done, total int) {
		if next != nil {
			next(done, total)
		}
		p.Rest()
	}
}
