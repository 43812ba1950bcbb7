package pace

import (
	"slices"
	"testing"
	"time"
)

// clock is a fake clock: work and sleep move it, nothing waits.
type clock struct {
	t     time.Time
	slept []time.Duration
}

func (c *clock) now() time.Time        { return c.t }
func (c *clock) work(d time.Duration)  { c.t = c.t.Add(d) }
func (c *clock) sleep(d time.Duration) { c.slept = append(c.slept, d); c.t = c.t.Add(d) }
func (c *clock) pacer(on bool) *Pacer  { return newPacer(on, c.now, c.sleep) }
func (c *clock) total() (t time.Duration) {
	for _, d := range c.slept {
		t += d
	}
	return t
}

// TestRest: a Pacer rests for exactly the time worked since its last
// rest, once that is 2 ms, and its own rest does not count as work.
func TestRest(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	p := c.pacer(true)
	c.work(time.Millisecond)
	if p.Rest(); len(c.slept) != 0 {
		t.Fatalf("rested %v after 1 ms of work", c.slept)
	}
	c.work(1500 * time.Microsecond)
	if p.Rest(); !slices.Equal(c.slept, []time.Duration{2500 * time.Microsecond}) {
		t.Fatalf("rested %v after 2.5 ms of work, want [2.5ms]", c.slept)
	}
	c.work(3 * time.Millisecond)
	if p.Rest(); !slices.Equal(c.slept, []time.Duration{2500 * time.Microsecond, 3 * time.Millisecond}) {
		t.Fatalf("rested %v after 3 ms more, want [2.5ms 3ms]", c.slept)
	}
}

// TestRestHalf: over many short slices of work, the time rested equals
// the time worked, but for the last less than 2 ms not rested yet: the
// work takes half of the time.
func TestRestHalf(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	p := c.pacer(true)
	var worked time.Duration
	for i := range 1000 {
		d := time.Duration(100+i%7*150) * time.Microsecond
		c.work(d)
		worked += d
		p.Rest()
	}
	left := worked - c.total()
	if left < 0 || left >= 2*time.Millisecond {
		t.Fatalf("worked %v, rested %v: %v not rested, want [0, 2ms)", worked, c.total(), left)
	}
	for _, d := range c.slept {
		if d < 2*time.Millisecond || d >= 3*time.Millisecond {
			t.Fatalf("a rest of %v, want at least 2 ms and less than 2 ms plus one slice", d)
		}
	}
}

// TestNeverRests: a nil Pacer, the zero value and one made off never
// rest.
func TestNeverRests(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	var zero Pacer
	for _, p := range []*Pacer{nil, &zero, c.pacer(false)} {
		c.work(time.Second)
		p.Rest()
	}
	if len(c.slept) != 0 {
		t.Fatalf("rested %v", c.slept)
	}
}

// TestProgress: each report reaches next, in order, before the rest; a
// nil next only rests.
func TestProgress(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	var got [][2]int
	report := progress(func(done, total int) {
		got = append(got, [2]int{done, total})
		c.work(time.Millisecond) // the work reported on
	}, c.pacer(true))
	for i := 1; i <= 4; i++ {
		report(i, 4)
	}
	if !slices.Equal(got, [][2]int{{1, 4}, {2, 4}, {3, 4}, {4, 4}}) {
		t.Fatalf("reports %v", got)
	}
	if !slices.Equal(c.slept, []time.Duration{2 * time.Millisecond, 2 * time.Millisecond}) {
		t.Fatalf("rested %v after 4 reports of 1 ms each, want [2ms 2ms]", c.slept)
	}
	c = &clock{t: time.Unix(1e9, 0)}
	report = progress(nil, c.pacer(true))
	c.work(5 * time.Millisecond)
	if report(1, 1); !slices.Equal(c.slept, []time.Duration{5 * time.Millisecond}) {
		t.Fatalf("nil next: rested %v, want [5ms]", c.slept)
	}
}

// TestNotResting: with Resting off (as the tests under the race detector
// set it), New(true) makes a Pacer that never rests, and with it on, one
// that does.
func TestNotResting(t *testing.T) {
	defer func(was bool) { Resting = was }(Resting)
	for _, on := range []bool{false, true} {
		Resting = on
		if p := New(true); p.on != on {
			t.Errorf("Resting %v: New(true) rests %v", on, p.on)
		}
	}
}
