module github.com/cairndb/cairn/internal/baseline

go 1.26.0

require (
	github.com/cairndb/cairn v0.0.0
	github.com/coder/hnsw v0.6.1
	github.com/viterin/vek v0.4.3
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/chewxy/math32 v1.10.1 // indirect
	github.com/google/renameio v1.0.1 // indirect
	github.com/viterin/partial v1.1.0 // indirect
	golang.org/x/exp v0.0.0-20240506185415-9bf2ced13842 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/cairndb/cairn => ../..
