module github.com/cairndb/cairn

go 1.26
