// Command testprogress reads the output of go test -json on its standard
// input and prints one line as each package starts and as it ends, with
// its time, so that a long run is never silent: after a minute without a
// line it names the packages still running and their longest-running
// test. The output of a
// failing test (or build) is printed in full as soon as it fails. It exits
// with status 1 if any package failed. test.sh uses it:
//
//	go test -json ./... | go run ./internal/testprogress -label race
//
// Its flags:
//
//	-label s  prefix for every line (e.g. "race"), to tell steps apart
//	-slow d   also print each top-level test that took at least d (0: none)
//
// Lines that are not JSON (the go command's own errors) pass through.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

// event is one line of go test -json (cmd/test2json), or of a build event
// (ImportPath set) that go test -json mixes in.
type event struct {
	Time        time.Time
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

// pkgState is what is known of a package that has started.
type pkgState struct {
	start   time.Time
	output  map[string][]string  // by test ("" for the package), until it passes
	running map[string]time.Time // top-level tests now running
}

type progress struct {
	w      io.Writer
	last   time.Time // when a line was last printed
	label  string
	slow   time.Duration
	pkgs   map[string]*pkgState
	builds map[string][]string // build output by import path
	passed int
	failed int
}

func main() {
	label := flag.String("label", "", "prefix for every line")
	slow := flag.Duration("slow", 0, "print each top-level test that took at least this long (0: none)")
	flag.Parse()
	p := &progress{w: os.Stdout, last: time.Now(), slow: *slow,
		pkgs: map[string]*pkgState{}, builds: map[string][]string{}}
	if *label != "" {
		p.label = *label + ": "
	}

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	tick := time.NewTicker(15 * time.Second)
	defer tick.Stop()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				p.summary()
				if p.failed > 0 {
					os.Exit(1)
				}
				return
			}
			p.line(line)
		case now := <-tick.C:
			if now.Sub(p.last) >= time.Minute {
				p.still(now)
			}
		}
	}
}

func (p *progress) printf(format string, args ...any) {
	fmt.Fprintf(p.w, p.label+format, args...)
	p.last = time.Now()
}

func (p *progress) line(line string) {
	var e event
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
		fmt.Fprintln(p.w, line)
		return
	}
	switch {
	case e.ImportPath != "": // a build event
		switch e.Action {
		case "build-output":
			p.builds[e.ImportPath] = append(p.builds[e.ImportPath], e.Output)
		case "build-fail":
			fmt.Fprint(p.w, strings.Join(p.builds[e.ImportPath], ""))
			p.printf("build failed: %s\n", e.ImportPath)
			delete(p.builds, e.ImportPath)
		}
		return
	case e.Package == "":
		return
	}
	s := p.pkgs[e.Package]
	if s == nil {
		s = &pkgState{start: time.Now(), output: map[string][]string{}, running: map[string]time.Time{}}
		p.pkgs[e.Package] = s
	}
	top := e.Test != "" && !strings.Contains(e.Test, "/")
	switch e.Action {
	case "start":
		p.printf("start %s\n", e.Package)
	case "run":
		if top {
			s.running[e.Test] = time.Now()
		}
	case "output":
		if !strings.HasPrefix(e.Output, "=== ") {
			s.output[e.Test] = append(s.output[e.Test], e.Output)
		}
	case "pass", "skip", "fail":
		if e.Test != "" {
			if top {
				delete(s.running, e.Test)
			}
			if e.Action == "fail" {
				fmt.Fprint(p.w, strings.Join(s.output[e.Test], ""))
			} else if top && p.slow > 0 && e.Elapsed >= p.slow.Seconds() {
				p.printf("  slow %s %s %.1fs\n", e.Package, e.Test, e.Elapsed)
			}
			delete(s.output, e.Test)
			return
		}
		switch {
		case e.Action == "pass":
			p.passed++
			p.printf("ok    %s %.1fs\n", e.Package, e.Elapsed)
		case e.Action == "skip":
			// no test files
		case e.FailedBuild != "":
			p.failed++
			p.printf("FAIL  %s (build failed: %s)\n", e.Package, e.FailedBuild)
		default:
			// What is left: tests that never ended (a panic, a
			// timeout), then the package's own lines.
			p.failed++
			for _, t := range slices.Sorted(maps.Keys(s.output)) {
				fmt.Fprint(p.w, strings.Join(s.output[t], ""))
			}
			p.printf("FAIL  %s %.1fs\n", e.Package, e.Elapsed)
		}
		delete(p.pkgs, e.Package)
	}
}

// still names the packages running, each with its longest-running
// top-level test.
func (p *progress) still(now time.Time) {
	var names []string
	for name := range p.pkgs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := p.pkgs[name]
		test, since := "", now
		for t, at := range s.running {
			if at.Before(since) {
				test, since = t, at
			}
		}
		msg := fmt.Sprintf("  ... %s running %s", name, now.Sub(s.start).Round(time.Second))
		if test != "" {
			msg += fmt.Sprintf(", %s for %s", test, now.Sub(since).Round(time.Second))
		}
		p.printf("%s\n", msg)
	}
}

func (p *progress) summary() {
	p.printf("packages: %d passed, %d failed\n", p.passed, p.failed)
}
