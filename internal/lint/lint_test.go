// Package lint holds tests that guard the shape of the repository: the
// package graph of every module in the workspace (go.work), and the module
// graph a program importing the library pays for, both checked with
// `go list`.
package lint

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/cairndb/cairn"

// rule says what a package may import: other packages of this module
// (their transitive closure must stay inside this list too) and third-party
// import path prefixes. The standard library is always allowed.
type rule struct {
	cairn []string
	third []string
}

// graph is the package graph of the workspace: the library module's
// packages, and those of the modules that carry heavy dependencies
// (internal/baseline, cmd/vecbench, cmd/cairn, langchaingo, genkit, eino;
// weaviate, a client of Weaviate that needs gRPC and protowire alone). A
// package missing from it fails the test: a new package must be given its
// place here.
var graph = map[string]rule{
	"vector/internal/kernel": {third: []string{"golang.org/x/sys/cpu"}},
	"vector":                 {cairn: []string{"vector/internal/kernel", "internal/hugepage", "internal/pagefile"}, third: []string{"golang.org/x/sys/cpu"}},
	"vector/quant":           {cairn: []string{"vector", "vector/internal/kernel"}, third: []string{"golang.org/x/sys/cpu"}},
	"flat":                   {cairn: []string{"vector"}},
	"hnsw":                   {cairn: []string{"vector", "vector/quant", "internal/hugepage", "internal/hnswseam", "internal/pace", "internal/reservoir"}},
	"internal/hugepage":      {},
	"internal/pagefile":      {third: []string{"golang.org/x/sys/unix"}},
	// What hnsw shares with the root alone: the seam it fills in, the
	// pacer of background work and the reservoir of recent queries.
	"internal/hnswseam":     {},
	"internal/pace":         {},
	"internal/reservoir":    {},
	"qflat":                 {cairn: []string{"vector", "vector/quant"}},
	"sqlitestore":           {cairn: []string{"vector", "internal/crashpoint", "internal/vfsname", "internal/symlink"}, third: []string{"modernc.org/sqlite"}},
	"internal/crashpoint":   {},
	"internal/symlink":      {},
	"internal/vfsname":      {},
	"internal/sqlitetest":   {cairn: []string{"internal/vfsname"}, third: []string{"modernc.org/sqlite"}},
	"internal/powerfail":    {third: []string{"modernc.org/libc", "modernc.org/sqlite"}},
	"recall":                {cairn: []string{"vector", "internal/hdf5", "internal/symlink"}},
	"internal/hdf5":         {cairn: []string{"vector"}},
	"internal/vectortest":   {cairn: []string{"vector"}},
	"internal/keyword":      {cairn: []string{"vector"}},
	"internal/rank":         {cairn: []string{"vector"}},
	"internal/versions":     {cairn: []string{"vector"}},
	"internal/memorytest":   {cairn: []string{"", "vector"}},
	"internal/lint":         {},
	"internal/testprogress": {},
	"internal/baseline":     {cairn: []string{"vector", "flat", "recall"}, third: []string{"github.com/coder/hnsw", "github.com/viterin/vek", "gonum.org/v1/gonum"}},
	"":                      {cairn: []string{"vector", "vector/quant", "flat", "hnsw", "qflat", "sqlitestore", "internal/keyword", "internal/rank", "internal/versions", "internal/metavalue", "internal/hnswseam", "internal/pace", "internal/reservoir", "internal/route"}},
	// openai is an embeddings client beside the root, not under it: the
	// root never imports it (nor net/http), a program that wants it does.
	"openai": {},
	// metavalue holds what metadata may hold, for the root and for the
	// modules that must accept exactly what it accepts (weaviate,
	// cmd/cairn), without an exported normaliser in the root's API.
	"internal/metavalue": {cairn: []string{"vector"}},
	// route measures the ways to an Auto collection's recall target (the
	// two scans and the graph) for the root, which holds the verdicts.
	"internal/route": {cairn: []string{"vector", "flat", "qflat", "hnsw", "internal/hnswseam"}},
	"cmd/cairn": {
		cairn: []string{"", "vector", "hnsw", "sqlitestore", "openai", "internal/metavalue", "internal/symlink"},
		third: []string{"github.com/modelcontextprotocol/go-sdk", "github.com/google/jsonschema-go", "modernc.org/sqlite"},
	},
	"langchaingo": {
		cairn: []string{"", "vector"},
		third: []string{"github.com/tmc/langchaingo"},
	},
	"genkit": {
		cairn: []string{"", "vector"},
		third: []string{"github.com/firebase/genkit/go"},
	},
	"eino": {
		cairn: []string{"", "vector"},
		third: []string{"github.com/cloudwego/eino"},
	},
	"cmd/torture": {cairn: []string{"", "vector", "sqlitestore", "internal/crashpoint", "internal/powerfail", "internal/vfsname"}},
	// bench/tenants measures many tenants in one file through the API.
	"bench/tenants": {cairn: []string{"", "sqlitestore"}},
	// bench/history and bench/agentmem measure history, dedup and
	// recency through the API.
	"bench/history":  {cairn: []string{""}},
	"bench/agentmem": {cairn: []string{"", "recall", "vector"}},
	"bench/pagedram": {cairn: []string{"hnsw", "recall", "sqlitestore", "vector"}},
	// bench/openload times an Open through the API.
	"bench/openload": {cairn: []string{"", "hnsw", "recall", "vector"}},
	"weaviate": {
		cairn: []string{"", "vector", "hnsw", "internal/metavalue"},
		third: []string{"google.golang.org/grpc", "google.golang.org/protobuf/encoding/protowire"},
	},
	// scalebench measures the inputs of weaviate/SCALING.md on a cluster.
	"weaviate/internal/scalebench": {cairn: []string{"", "recall", "vector", "weaviate"}},
	"cmd/vecbench": {
		cairn: []string{"", "recall", "flat", "hnsw", "qflat", "sqlitestore", "internal/baseline", "vector", "weaviate"},
		third: []string{"gonum.org/v1/plot", "gonum.org/v1/gonum"},
	},
}

type pkg struct {
	path     string
	standard bool
	imports  []string
}

func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}|{{.Standard}}|{{join .Imports \",\"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]pkg{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 3)
		if len(f) != 3 {
			t.Fatalf("unexpected go list line %q", line)
		}
		p := pkg{path: f[0], standard: f[1] == "true"}
		if f[2] != "" {
			p.imports = strings.Split(f[2], ",")
		}
		pkgs[p.path] = p
	}
	return pkgs
}

func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// closure returns the packages of ours that name may reach: its allowed
// imports and theirs, transitively.
func closure(name string) map[string]bool {
	out := map[string]bool{}
	var add func(string)
	add = func(n string) {
		for _, d := range graph[n].cairn {
			if !out[d] {
				out[d] = true
				add(d)
			}
		}
	}
	add(name)
	return out
}

// violations lists every import in pkgs that breaks the package graph.
func violations(pkgs map[string]pkg) []string {
	var bad []string
	for path, p := range pkgs {
		name, ours := rel(path)
		if !ours {
			continue
		}
		r, known := graph[name]
		if !known {
			bad = append(bad, "package "+path+" is not in the package graph of internal/lint")
			continue
		}
		allowed := closure(name)
		for _, imp := range p.imports {
			dep, isOurs := rel(imp)
			switch {
			case isOurs && !allowed[dep]:
				bad = append(bad, path+" imports "+imp)
			case !isOurs && !pkgs[imp].standard &&
				!slices.ContainsFunc(r.third, func(prefix string) bool { return strings.HasPrefix(imp, prefix) }):
				bad = append(bad, path+" imports third-party "+imp)
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// TestPackageGraph fails when a package of the module imports what the
// package graph does not allow. Checking each package's direct imports
// against the closure of its rule covers indirect dependencies too.
func TestPackageGraph(t *testing.T) {
	pkgs := listPackages(t)
	ours := 0
	for path := range pkgs {
		if _, ok := rel(path); ok {
			ours++
		}
	}
	if ours < 3 {
		t.Fatalf("go list found only %d packages of the module", ours)
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// benchOnly are the modules only the benchmarks, vecbench and the
// modules around the library (cmd/cairn, langchaingo, genkit, eino) need: a
// program that imports the library must not get them in its module graph.
var benchOnly = []string{
	"gonum.org/v1/plot", "github.com/coder/hnsw", "github.com/viterin/vek",
	"github.com/modelcontextprotocol/go-sdk", "github.com/tmc/langchaingo",
	"github.com/firebase/genkit/go", "github.com/cloudwego/eino",
}

// TestLibraryModuleGraph lists the library module's own module graph, as
// a program that imports only github.com/cairndb/cairn sees it (outside
// the workspace), and fails if a benchmark-only module is in it.
func TestLibraryModuleGraph(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", module, err)
	}
	cmd := exec.Command("go", "list", "-m", "all")
	cmd.Dir = strings.TrimSpace(string(dir))
	cmd.Env = append(cmd.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m all: %v\n%s", err, out)
	}
	mods := strings.Fields(string(out))
	if !slices.Contains(mods, "modernc.org/sqlite") {
		t.Fatalf("go list -m all does not list modernc.org/sqlite; output:\n%s", out)
	}
	for _, m := range mods {
		for _, bad := range benchOnly {
			if m == bad {
				t.Errorf("the library module's graph holds %s, which only benchmarks and tools need", m)
			}
		}
	}
}

// TestViolationsDetected checks the checker itself on a made-up graph.
func TestViolationsDetected(t *testing.T) {
	pkgs := map[string]pkg{
		module + "/flat":   {path: module + "/flat", imports: []string{module + "/vector", module + "/hnsw", "fmt"}},
		module + "/vector": {path: module + "/vector", imports: []string{"github.com/viterin/vek", "golang.org/x/sys/cpu"}},
		module + "/extra":  {path: module + "/extra"},
		"fmt":              {path: "fmt", standard: true},
	}
	got := violations(pkgs)
	want := []string{
		module + "/flat imports " + module + "/hnsw",
		module + "/vector imports third-party github.com/viterin/vek",
		"package " + module + "/extra is not in the package graph of internal/lint",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("violations = %q\nwant %q", got, want)
	}
}
