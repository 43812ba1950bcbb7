#!/usr/bin/env bash
# Counts the public API of the library's packages: for each, the exported
# identifiers as go/doc sees them, and the lines of `go doc -all`.
#
#   bench/apisize.sh                 # root, vector, flat, qflat, hnsw, sqlitestore
#   bench/apisize.sh ./openai ./weaviate
#
# The identifiers are split into top-level names (constants, variables,
# functions, types), methods of exported types (as go/doc lists them:
# with those promoted from embedded unexported types), and exported fields
# and interface methods of exported types. Only the files of this platform's build count (go list),
# tests never. It reads the packages in place, so run it on any commit to
# compare before and after a change.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
	set -- . ./vector ./flat ./qflat ./hnsw ./sqlitestore
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The counter is a small program of the standard library only, built
# outside the workspace so that it is no package of the repository.
cat >"$tmp/go.mod" <<'EOF'
module apisize
EOF
cat >"$tmp/main.go" <<'EOF'
// Command apisize prints the exported identifiers of one package, given its
// import path and its Go files.
package main

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
)

func main() {
	path, names := os.Args[1], os.Args[2:]
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	top, methods, fields := 0, 0, 0
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			top += len(v.Names)
		}
	}
	values(p.Consts)
	values(p.Vars)
	top += len(p.Funcs)
	for _, t := range p.Types {
		top++
		values(t.Consts)
		values(t.Vars)
		top += len(t.Funcs)
		methods += len(t.Methods)
		for _, spec := range t.Decl.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok || ts.Name.Name != t.Name {
				continue
			}
			var list *ast.FieldList
			switch x := ts.Type.(type) {
			case *ast.StructType:
				list = x.Fields
			case *ast.InterfaceType:
				list = x.Methods
			}
			if list == nil {
				continue
			}
			for _, f := range list.List {
				for _, n := range f.Names {
					if n.IsExported() {
						fields++
					}
				}
				if len(f.Names) == 0 { // embedded
					if id := embeddedName(f.Type); id != nil && id.IsExported() {
						fields++
					}
				}
			}
		}
	}
	fmt.Printf("%d %d %d %d\n", top, methods, fields, top+methods+fields)
}

// embeddedName returns the name of an embedded field's type (T, *T, p.T).
func embeddedName(e ast.Expr) *ast.Ident {
	switch x := e.(type) {
	case *ast.Ident:
		return x
	case *ast.StarExpr:
		return embeddedName(x.X)
	case *ast.SelectorExpr:
		return x.Sel
	case *ast.IndexExpr:
		return embeddedName(x.X)
	case *ast.IndexListExpr:
		return embeddedName(x.X)
	}
	return nil
}
EOF
(cd "$tmp" && GOWORK=off go build -o apisize .)

printf '%-28s %6s %8s %7s %6s %12s\n' package names methods fields total "go doc -all"
sum=0 sumdoc=0
for dir in "$@"; do
	read -r path gofiles < <(cd "$dir" && go list -f '{{.ImportPath}} {{range .GoFiles}}{{$.Dir}}/{{.}} {{end}}' .)
	read -r top methods fields total < <("$tmp/apisize" "$path" $gofiles)
	lines=$(cd "$dir" && go doc -all . | wc -l)
	printf '%-28s %6d %8d %7d %6d %12d\n' "${path#github.com/cairndb/}" "$top" "$methods" "$fields" "$total" "$lines"
	sum=$((sum + total)) sumdoc=$((sumdoc + lines))
done
printf '%-28s %6s %8s %7s %6d %12d\n' all '' '' '' "$sum" "$sumdoc"
