package sqlitestore

// This file compares a file's schema and rows with what this package
// makes, for a check of the file (cairn.Check): the schema it expects is
// made by the same code that makes a file's (the migrations and
// CreateCollection's statements), run on an empty database in memory.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// itemsTable is the name of the items table of the collection of row id
// id.
func itemsTable(id int64) string { return "items_" + strconv.FormatInt(id, 10) }

// itemsTableID returns the row id of the collection whose items table is
// named table, and false if no collection's is.
func itemsTableID(table string) (int64, bool) {
	s, ok := strings.CutPrefix(table, "items_")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && itemsTable(id) == table
}

// itemsSchema returns the statements that make a collection's items table
// of the given name and its key index.
func itemsSchema(table string) []string {
	return []string{
		fmt.Sprintf("CREATE TABLE %s (id INTEGER PRIMARY KEY, vec BLOB NOT NULL, key TEXT, text TEXT, meta TEXT, %s)", table, itemColumns),
		fmt.Sprintf("CREATE UNIQUE INDEX %s_key ON %s (key) WHERE key IS NOT NULL", table, table),
	}
}

// schemaObject is one row of sqlite_schema.
type schemaObject struct {
	typ, name, table, sql string
}

// readSchema returns the tables and indexes of the database conn is
// connected to, by name, but for SQLite's own (sqlite_autoindex_*,
// sqlite_stat1, ...): the indexes SQLite makes for a table's constraints
// are compared as part of their table (tableShape). Triggers and views are
// left out too: cairn makes none, and ForeignSchema lists them.
func readSchema(ctx context.Context, conn *sql.Conn) (map[string]schemaObject, error) {
	rows, err := conn.QueryContext(ctx, `SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master
		WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	out := map[string]schemaObject{}
	for rows.Next() {
		var o schemaObject
		if err := rows.Scan(&o.typ, &o.name, &o.table, &o.sql); err != nil {
			return nil, scanErr(err)
		}
		// SQLite's names are ASCII case-insensitive: "History" is the
		// name "history", and a table of either takes it.
		out[lowerASCII(o.name)] = o
	}
	return out, mapErr(rows.Err())
}

// lowerASCII is s with its ASCII capitals made small, as SQLite compares
// names.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// article is "a table" or "an index", of typ, one of sqlite_master's.
func article(typ string) string {
	if strings.HasPrefix(typ, "i") {
		return "an " + typ
	}
	return "a " + typ
}

// expectedSchema is the schema this build makes for a file.
type expectedSchema struct {
	// objects are the tables and indexes of a file of the version, with
	// the items tables of the collections.
	objects map[string]schemaObject
	// later maps the name of each table and index the migrations of a
	// file of the version to this build's add to the version that adds it.
	later map[string]int
	// mem is the database in memory that holds objects.
	mem *sql.Conn
}

// newExpectedSchema makes, in memory, the schema of a file of the given
// version whose catalogue holds collections of the given row ids: the
// migrations up to the version, then each collection's items table as
// CreateCollection makes it. Items tables are made after the migrations,
// with the time columns migrateV2 adds, so the version must be at least
// 2; every file Open accepts is, once opened (readOnlyFrom). release
// frees the database.
func newExpectedSchema(ctx context.Context, version int, ids []int64) (_ *expectedSchema, release func(), err error) {
	if version < 2 || version > schemaVersion() {
		return nil, nil, fmt.Errorf("sqlitestore: no schema to compare a file of version %d with", version)
	}
	sqldb, conn, err := connect(ctx, ":memory:")
	if err != nil {
		return nil, nil, err
	}
	release = func() {
		conn.Close()
		sqldb.Close()
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	for v := range version {
		if err := migrations[v](ctx, conn); err != nil {
			return nil, nil, err
		}
	}
	for _, id := range ids {
		if err := execAll(ctx, conn, itemsSchema(itemsTable(id))...); err != nil {
			return nil, nil, err
		}
	}
	e := &expectedSchema{later: map[string]int{}, mem: conn}
	if e.objects, err = readSchema(ctx, conn); err != nil {
		return nil, nil, err
	}
	// The names the later migrations take, applied in a transaction
	// rolled back: objects stays the schema of the version.
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return nil, nil, err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	seen := nameSet(e.objects)
	for v := version; v < schemaVersion(); v++ {
		if err := migrations[v](ctx, conn); err != nil {
			return nil, nil, err
		}
		now, err := readSchema(ctx, conn)
		if err != nil {
			return nil, nil, err
		}
		for name := range now {
			if !seen[name] {
				seen[name] = true
				e.later[name] = v + 1
			}
		}
	}
	return e, release, nil
}

// nameSet returns the set of the names of objs.
func nameSet(objs map[string]schemaObject) map[string]bool {
	out := make(map[string]bool, len(objs))
	for name := range objs {
		out[name] = true
	}
	return out
}

// normalSQL is s with every run of white space made one space, as two
// spellings of one statement that differ only in layout compare equal.
func normalSQL(s string) string { return strings.Join(strings.Fields(s), " ") }

// tableShape describes what SQLite makes of the table name of the
// database conn is connected to: its columns, by name, and its other
// facets (WITHOUT ROWID, the keys and unique constraints, the foreign
// keys), one line each.
func tableShape(ctx context.Context, conn *sql.Conn, name string) (cols map[string]string, order []string, facets []string, err error) {
	quoted := strconv.Quote(name)
	rows, err := conn.QueryContext(ctx, "SELECT name, type, \"notnull\", coalesce(dflt_value, ''), pk, hidden FROM pragma_table_xinfo("+quoted+")")
	if err != nil {
		return nil, nil, nil, err
	}
	cols = map[string]string{}
	for rows.Next() {
		var col, typ, dflt string
		var notNull, pk, hidden int
		if err := rows.Scan(&col, &typ, &notNull, &dflt, &pk, &hidden); err != nil {
			rows.Close()
			return nil, nil, nil, err
		}
		d := typ
		if notNull != 0 {
			d += " NOT NULL"
		}
		if dflt != "" {
			d += " DEFAULT " + dflt
		}
		if pk != 0 {
			d += fmt.Sprintf(" (key column %d)", pk)
		}
		if hidden != 0 {
			d += " (generated)"
		}
		cols[col] = strings.TrimSpace(d)
		order = append(order, col)
	}
	if err := rows.Close(); err != nil {
		return nil, nil, nil, err
	}
	var wr int
	if err := conn.QueryRowContext(ctx, "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = "+quoted).Scan(&wr); err != nil {
		return nil, nil, nil, err
	}
	if wr != 0 {
		facets = append(facets, "WITHOUT ROWID")
	}
	// The keys and unique constraints, as the indexes SQLite makes for
	// them; the indexes made with CREATE INDEX are compared by name.
	rows, err = conn.QueryContext(ctx, `SELECT l.origin, (SELECT group_concat(d, ', ') FROM (
			SELECT coalesce(x.name, '<expression>') || CASE x.coll WHEN 'BINARY' THEN '' ELSE ' COLLATE ' || x.coll END || CASE x."desc" WHEN 1 THEN ' DESC' ELSE '' END AS d
			FROM pragma_index_xinfo(l.name) AS x WHERE x.key = 1 ORDER BY x.seqno))
		FROM pragma_index_list(`+quoted+`) AS l WHERE l.origin <> 'c'`)
	if err != nil {
		return nil, nil, nil, err
	}
	for rows.Next() {
		var origin, colsOf string
		if err := rows.Scan(&origin, &colsOf); err != nil {
			rows.Close()
			return nil, nil, nil, err
		}
		kind := "UNIQUE"
		if origin == "pk" {
			kind = "PRIMARY KEY"
		}
		facets = append(facets, fmt.Sprintf("%s (%s)", kind, colsOf))
	}
	if err := rows.Close(); err != nil {
		return nil, nil, nil, err
	}
	rows, err = conn.QueryContext(ctx, `SELECT id, "table", "from", coalesce("to", ''), on_update, on_delete FROM pragma_foreign_key_list(`+quoted+`) ORDER BY id, seq`)
	if err != nil {
		return nil, nil, nil, err
	}
	for rows.Next() {
		var id int
		var to, from, toCol, onUpdate, onDelete string
		if err := rows.Scan(&id, &to, &from, &toCol, &onUpdate, &onDelete); err != nil {
			rows.Close()
			return nil, nil, nil, err
		}
		facets = append(facets, fmt.Sprintf("FOREIGN KEY (%s) REFERENCES %s(%s) ON UPDATE %s ON DELETE %s", from, to, toCol, onUpdate, onDelete))
	}
	if err := rows.Close(); err != nil {
		return nil, nil, nil, err
	}
	slices.Sort(facets)
	return cols, order, facets, nil
}

// SchemaDrift compares the file's tables and indexes with those this
// build makes for a file of its schema version and its collections, and
// returns what differs, one sentence each; none for a file as cairn made
// it. It reports a table or index cairn makes that is missing or not as
// cairn makes it (a column lost, added or changed; an index made over
// other columns or under another condition); the items table of a
// collection not in the catalogue, whose rows are left over and whose
// name a new collection can be given; a table or index of a name a later
// schema version takes, which stops the file's migration; and an index
// another program made on one of cairn's tables that can refuse cairn's
// writes (a unique one) or fail them (one over an expression or under a
// condition, which every write evaluates). Other tables and indexes of
// other programs are not reported: cairn neither reads nor writes them.
// Triggers and views are [DB.ForeignSchema]'s.
func (db *DB) SchemaDrift(ctx context.Context) ([]string, error) {
	var out []string
	err := db.withConn(func(conn *sql.Conn) error {
		var err error
		out, _, err = schemaDrift(ctx, conn)
		return err
	})
	return out, err
}

// catalogue returns the row id and name of every collection in the
// catalogue, by row id, as the file's table holds them.
func catalogue(ctx context.Context, conn *sql.Conn) ([]int64, map[int64]string, error) {
	rows, err := conn.QueryContext(ctx, "SELECT id, name FROM collections ORDER BY id")
	if err != nil {
		return nil, nil, mapErr(err)
	}
	defer rows.Close()
	var ids []int64
	names := map[int64]string{}
	for rows.Next() {
		var id int64
		var name sql.NullString
		if err := rows.Scan(&id, &name); err != nil {
			return nil, nil, scanErr(err)
		}
		ids = append(ids, id)
		names[id] = name.String
	}
	return ids, names, mapErr(rows.Err())
}

// schemaDrift is SchemaDrift on conn. It returns too the names of the
// tables cairn makes that the file lacks or holds otherwise.
func schemaDrift(ctx context.Context, conn *sql.Conn) (_ []string, drifted map[string]bool, _ error) {
	var version int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return nil, nil, mapErr(err)
	}
	got, err := readSchema(ctx, conn)
	if err != nil {
		return nil, nil, err
	}
	var ids []int64
	names := map[int64]string{}
	if o, ok := got["collections"]; ok && o.typ == "table" {
		// A catalogue that cannot be read is reported below as a table
		// not as cairn makes it, or by the load that reads it.
		if ids, names, err = catalogue(ctx, conn); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, nil, cerr
			}
			ids = nil
		}
	}
	want, closeWant, err := newExpectedSchema(ctx, version, ids)
	if err != nil {
		return nil, nil, err
	}
	defer closeWant()
	var out []string
	drifted = map[string]bool{}
	of := func(o schemaObject) string {
		if id, ok := itemsTableID(o.table); ok {
			if name, ok := names[id]; ok {
				return fmt.Sprintf(" of collection %q", name)
			}
		}
		return ""
	}
	for _, name := range sortedNames(want.objects) {
		w := want.objects[name]
		g, ok := got[name]
		switch {
		case !ok:
			if w.typ == "table" {
				drifted[name] = true
				out = append(out, fmt.Sprintf("the file lacks the table %q%s that cairn makes (schema version %d)", name, of(w), version))
			} else if _, ok := got[lowerASCII(w.table)]; ok {
				// (An index of a table the file lacks goes with it.)
				out = append(out, fmt.Sprintf("the file lacks the index %q on table %q%s that cairn makes (schema version %d)", name, w.table, of(w), version))
			}
		case g.typ != w.typ:
			drifted[name] = true
			out = append(out, fmt.Sprintf("%q is %s, where cairn makes %s", g.name, article(g.typ), article(w.typ)))
		case w.typ == "index":
			if lowerASCII(g.table) != lowerASCII(w.table) || normalSQL(g.sql) != normalSQL(w.sql) {
				out = append(out, fmt.Sprintf("the index %q on table %q%s is not the one cairn makes: the file has %q, cairn makes %q", name, w.table, of(w), normalSQL(g.sql), normalSQL(w.sql)))
			}
		default:
			d, err := tableDrift(ctx, conn, want.mem, g, w)
			if err != nil {
				return nil, nil, err
			}
			if len(d) > 0 {
				drifted[name] = true
			}
			for _, s := range d {
				out = append(out, fmt.Sprintf("table %q%s %s", name, of(w), s))
			}
		}
	}
	for _, name := range sortedNames(got) {
		g := got[name]
		if _, ok := want.objects[name]; ok {
			continue
		}
		if v, ok := want.later[name]; ok {
			out = append(out, fmt.Sprintf("the file holds %s %q that cairn did not make, of a name schema version %d takes: a writable open cannot migrate the file", article(g.typ), g.name, v))
			continue
		}
		if id, ok := itemsTableID(name); ok && g.typ == "table" {
			out = append(out, fmt.Sprintf("table %q belongs to no collection in the catalogue: its rows are left over, and a new collection given row id %d cannot be made", g.name, id))
			continue
		}
		if w, ok := want.objects[lowerASCII(g.table)]; ok && w.typ == "table" && g.typ == "index" {
			why, err := foreignIndexRisk(ctx, conn, g.table, g.name)
			if err != nil {
				return nil, nil, err
			}
			if why != "" {
				out = append(out, fmt.Sprintf("the index %q on table %q was not made by cairn and %s", g.name, g.table, why))
			}
		}
	}
	return out, drifted, nil
}

// sortedNames returns the names of objs, tables first, each kind in order.
func sortedNames(objs map[string]schemaObject) []string {
	names := make([]string, 0, len(objs))
	for name := range objs {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if ta, tb := objs[a].typ, objs[b].typ; ta != tb {
			return strings.Compare(tb, ta) // "table" before "index"
		}
		return strings.Compare(a, b)
	})
	return names
}

// tableDrift compares the table g of the file conn reads with the table w
// of the expected schema mem holds, and returns how g differs, each the
// end of a sentence that starts with the table's name.
func tableDrift(ctx context.Context, conn, mem *sql.Conn, g, w schemaObject) ([]string, error) {
	wantCols, wantOrder, wantFacets, err := tableShape(ctx, mem, w.name)
	if err != nil {
		return nil, err
	}
	gotCols, gotOrder, gotFacets, err := tableShape(ctx, conn, g.name)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		// A virtual table of a module this build lacks, say.
		return []string{fmt.Sprintf("cannot be read as cairn makes it: %v", err)}, nil
	}
	var out []string
	for _, col := range wantOrder {
		gc, ok := gotCols[col]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("lacks the column %q (%s) that cairn makes", col, wantCols[col]))
		case gc != wantCols[col]:
			out = append(out, fmt.Sprintf("has the column %q as %s, where cairn makes it %s", col, gc, wantCols[col]))
		}
	}
	for _, col := range gotOrder {
		if _, ok := wantCols[col]; !ok {
			out = append(out, fmt.Sprintf("has a column %q (%s) that cairn did not make", col, gotCols[col]))
		}
	}
	for _, f := range wantFacets {
		if !slices.Contains(gotFacets, f) {
			out = append(out, "lacks the "+f+" that cairn makes")
		}
	}
	for _, f := range gotFacets {
		if !slices.Contains(wantFacets, f) {
			out = append(out, "has a "+f+" that cairn did not make")
		}
	}
	if len(out) == 0 && normalSQL(g.sql) != normalSQL(w.sql) {
		// The same columns and keys, made otherwise: a CHECK constraint
		// or a collation, which can refuse or change cairn's writes.
		out = append(out, fmt.Sprintf("is not made as cairn makes it: the file has %q, cairn makes %q", normalSQL(g.sql), normalSQL(w.sql)))
	}
	return out, nil
}

// foreignIndexRisk returns why the index name on table, which cairn did
// not make, can change what cairn's writes do, or "" if it cannot (an
// index over columns with no condition only costs time and room).
func foreignIndexRisk(ctx context.Context, conn *sql.Conn, table, name string) (string, error) {
	var unique, partial, exprs int
	err := conn.QueryRowContext(ctx, `SELECT l."unique", l.partial, (SELECT count(*) FROM pragma_index_xinfo(l.name) WHERE key = 1 AND cid = -2)
		FROM pragma_index_list(`+strconv.Quote(table)+`) AS l WHERE l.name = ?`, name).Scan(&unique, &partial, &exprs)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", mapErr(err)
	}
	switch {
	case unique != 0:
		return "is unique: it can refuse cairn's writes", nil
	case exprs != 0:
		return "is over an expression, which every write evaluates: it can fail cairn's writes", nil
	case partial != 0:
		return "has a condition, which every write evaluates: it can fail cairn's writes", nil
	}
	return "", nil
}

// Orphans returns the rows of the tables that hold the collections' and
// tenants' rows (tenants, tenant_items, history, history_since,
// index_blobs, index_chunks) that belong to no collection in the
// catalogue, or to no tenant of one, one sentence per table and kind:
// rows another program left behind (a DELETE from the catalogue), which
// a new collection or tenant given the same row id would take for its
// own. A table the file lacks or that is not as cairn makes it
// ([DB.SchemaDrift]) is skipped.
func (db *DB) Orphans(ctx context.Context) ([]string, error) {
	var out []string
	err := db.withConn(func(conn *sql.Conn) error {
		got, err := readSchema(ctx, conn)
		if err != nil {
			return err
		}
		_, drifted, err := schemaDrift(ctx, conn)
		if err != nil {
			return err
		}
		sound := func(tables ...string) bool {
			for _, t := range tables {
				if o, ok := got[t]; !ok || o.typ != "table" || drifted[t] {
					return false
				}
			}
			return true
		}
		// The row id of the tenant of an index_blobs or index_chunks
		// name (indexKey), 0 for a collection's own.
		const tenantOfName = `(CASE WHEN substr(b.name, 1, 1) = char(31) THEN CAST(substr(b.name, 2, instr(substr(b.name, 2), char(31)) - 1) AS INTEGER) ELSE 0 END)`
		for _, q := range []struct {
			tables []string
			what   string
			query  string
		}{
			{[]string{"tenants", "collections"}, "tenants that belong to no collection in the catalogue",
				"SELECT count(*) FROM tenants WHERE coll NOT IN (SELECT id FROM collections)"},
			{[]string{"tenant_items", "tenants"}, "items that belong to no tenant in table tenants",
				"SELECT count(*) FROM tenant_items WHERE tenant NOT IN (SELECT id FROM tenants)"},
			{[]string{"history", "collections"}, "kept states that belong to no collection in the catalogue",
				"SELECT count(*) FROM history WHERE coll NOT IN (SELECT id FROM collections)"},
			{[]string{"history", "tenants", "collections"}, "kept states that belong to no tenant in table tenants",
				"SELECT count(*) FROM history WHERE tenant <> 0 AND coll IN (SELECT id FROM collections) AND NOT EXISTS (SELECT 1 FROM tenants WHERE id = history.tenant AND coll = history.coll)"},
			{[]string{"history_since", "collections"}, "history starts that belong to no collection in the catalogue",
				"SELECT count(*) FROM history_since WHERE coll NOT IN (SELECT id FROM collections)"},
			{[]string{"history_since", "tenants", "collections"}, "history starts that belong to no tenant in table tenants",
				"SELECT count(*) FROM history_since WHERE tenant <> 0 AND coll IN (SELECT id FROM collections) AND NOT EXISTS (SELECT 1 FROM tenants WHERE id = history_since.tenant AND coll = history_since.coll)"},
			{[]string{"index_blobs", "collections"}, "saved indexes that belong to no collection in the catalogue",
				"SELECT count(*) FROM index_blobs WHERE coll NOT IN (SELECT id FROM collections)"},
			{[]string{"index_blobs", "tenants", "collections"}, "saved indexes that belong to no tenant in table tenants",
				"SELECT count(*) FROM index_blobs AS b WHERE " + tenantOfName + " <> 0 AND b.coll IN (SELECT id FROM collections) AND NOT EXISTS (SELECT 1 FROM tenants AS t WHERE t.id = " + tenantOfName + " AND t.coll = b.coll)"},
			{[]string{"index_chunks", "index_blobs"}, "chunks that belong to no saved index in table index_blobs",
				"SELECT count(*) FROM index_chunks AS c WHERE NOT EXISTS (SELECT 1 FROM index_blobs AS b WHERE b.coll = c.coll AND b.name = c.name)"},
		} {
			if !sound(q.tables...) {
				continue
			}
			var n int64
			if err := conn.QueryRowContext(ctx, q.query).Scan(&n); err != nil {
				return scanErr(err)
			}
			rows := "rows"
			if n == 1 {
				rows = "row"
			}
			if n > 0 {
				out = append(out, fmt.Sprintf("table %q holds %s: %d %s", q.tables[0], q.what, n, rows))
			}
		}
		return nil
	})
	return out, err
}
