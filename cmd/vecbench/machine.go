package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/cairndb/cairn/vector"
)

// machine describes where a run happened; it heads every report.
type machine struct {
	CPU     string `json:"cpu"`
	Cores   int    `json:"cores"`
	Go      string `json:"go"`
	Commit  string `json:"commit"`
	Kernel  string `json:"kernel"`
	OS      string `json:"os"`
	Threads int    `json:"threads"`
	Date    string `json:"date"` // the day of the run, UTC, as 2006-01-02
}

func detectMachine(threads int) machine {
	return machine{
		CPU:     cpuModel(),
		Cores:   runtime.NumCPU(),
		Go:      runtime.Version(),
		Commit:  commit(),
		Kernel:  vector.KernelName(),
		OS:      runtime.GOOS + "/" + runtime.GOARCH,
		Threads: threads,
		Date:    time.Now().UTC().Format(time.DateOnly),
	}
}

func (m machine) line() string {
	return fmt.Sprintf("machine: %s, %d cores (%d used), %s %s, commit %s, distance kernels %s, %s",
		m.CPU, m.Cores, m.Threads, m.Go, m.OS, m.Commit, m.Kernel, m.Date)
}

// cpuModel reads the model name from /proc/cpuinfo where there is one.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown " + runtime.GOARCH + " CPU"
}

// commit returns the VCS revision the binary was built from (go build
// stamps it), else asks git (go run does not stamp), else "unknown".
func commit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
		if rev != "" {
			return rev[:min(12, len(rev))] + dirty
		}
	}
	// From the working directory, else from the source tree the binary
	// was built from (go build in a workspace does not stamp either).
	dirs := []string{"."}
	if _, file, _, ok := runtime.Caller(0); ok {
		dirs = append(dirs, filepath.Dir(file))
	}
	for _, dir := range dirs {
		out, err := exec.Command("git", "-C", dir, "describe", "--always", "--dirty", "--abbrev=12").Output()
		if err == nil {
			return strings.TrimSpace(string(out))
		}
	}
	return "unknown"
}
