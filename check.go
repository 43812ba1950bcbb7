package cairn

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// CheckReport is what [Check] found: a plain value, owned by the caller.
type CheckReport struct {
	// Problems lists what is wrong, one sentence each; empty if the file
	// passed every check.
	Problems []string
	// Collections, Tenants, Items, Versions and Graphs count what was
	// checked (Items those of the tenants too, Versions the states the
	// history keeps): saved graphs are counted when they were loaded and
	// verified.
	Collections, Tenants, Items, Versions, Graphs int
}

// maxProblems bounds the problems a check lists per collection.
const maxProblems = 20

// Check checks the cairn file at path without opening it as a [DB]. It
// opens the file read-only (see [Options.ReadOnly]), so it changes no byte
// of it and works beside the file's writer (checking the file as of its
// start) and on read-only media. It checks:
//
//   - every page, with SQLite's integrity_check;
//   - that the file holds no trigger or view (cairn makes none, and
//     another program's trigger can undo cairn's writes);
//   - the file's tables and indexes against those cairn makes for a file
//     of its schema version and collections ([sqlitestore.DB.SchemaDrift]):
//     one missing (a dropped index) or not as cairn makes it (a column lost
//     or added, an index over other columns), the items table of a
//     collection not in the catalogue, a table of a name a later schema
//     version takes, and another program's index on a table of cairn's
//     that can refuse or fail its writes (a unique one, one over an
//     expression or under a condition). Other programs' tables, and their
//     indexes over plain columns, are not reported: cairn neither reads
//     nor writes them, nor do they change what its writes do;
//   - the rows of the tables shared by the collections and tenants that
//     belong to no collection in the catalogue or no tenant of one
//     ([sqlitestore.DB.Orphans]), which another program's DELETE leaves
//     and a new collection or tenant given the same row id would take
//     for its own;
//   - for each collection, its settings, every row (and every row of each
//     of its tenants) against the key index a collection builds (each
//     item has a non-empty id, no id twice, id and text valid UTF-8
//     unless written before the store kept times, as the first builds
//     wrote them, metadata of the stored form, a vector of the
//     collection's dimension) and the count of rows against the vectors
//     loaded; every state the history keeps, by the same rules; and every
//     saved HNSW graph that is current, loaded over the rows and checked
//     with [hnsw.Index.Verify]. A graph that is missing or stale is not a
//     problem (the next load rebuilds it); one that fails its checksum or
//     does not match the rows is.
//
// A cairn file that cannot be loaded at all (a table a read needs is
// missing or lacks a column, a collection's vector is not of its
// dimension) is reported as one problem, after the differences of its
// schema from cairn's: the checks after the schema's do not run.
//
// The returned error is for a check that could not run (no such file, a
// file that is not a cairn database, or one of an older schema version
// that only a writable Open migrates); what the check finds is in the
// report. It reads the whole file.
func Check(ctx context.Context, path string, o *Options) (*CheckReport, error) {
	sdb, err := openExisting(ctx, path, o, true)
	var damaged *sqlitestore.DamagedError
	if errors.As(err, &damaged) {
		// A cairn file that cannot be loaded: the check ends here, with
		// what the loading and the schema tell.
		rep := &CheckReport{Problems: slices.Clone(damaged.Drift)}
		rep.Problems = append(rep.Problems, fmt.Sprintf("the file cannot be loaded, so the rest is not checked: %v", damaged.Err))
		return rep, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cairn: check: %w", err)
	}
	defer sdb.Close()
	rep := &CheckReport{}
	if err := sdb.IntegrityCheck(ctx); err != nil {
		if !errors.Is(err, vector.ErrCorrupt) {
			return nil, fmt.Errorf("cairn: check: %w", err)
		}
		rep.Problems = append(rep.Problems, err.Error())
	}
	foreign, err := sdb.ForeignSchema(ctx)
	if err != nil {
		return nil, fmt.Errorf("cairn: check: %w", err)
	}
	for _, f := range foreign {
		rep.Problems = append(rep.Problems, "the file holds a "+f+" that cairn did not make, which can change what writes do")
	}
	drift, err := sdb.SchemaDrift(ctx)
	if err != nil {
		return nil, fmt.Errorf("cairn: check: %w", err)
	}
	rep.Problems = append(rep.Problems, drift...)
	orphans, err := sdb.Orphans(ctx)
	if err != nil {
		return nil, fmt.Errorf("cairn: check: %w", err)
	}
	rep.Problems = append(rep.Problems, orphans...)
	infos, err := sdb.Collections(ctx)
	if err != nil {
		return nil, fmt.Errorf("cairn: check: %w", err)
	}
	for _, in := range infos {
		if err := checkCollection(ctx, sdb, in, rep); err != nil {
			return nil, fmt.Errorf("cairn: check %q: %w", in.Name, err)
		}
	}
	return rep, nil
}

// checkRows checks the rows of c, a collection or a tenant, against the
// key index a collection builds, and counts them in rep. Its error is for
// a check that could not go on.
func checkRows(ctx context.Context, c *sqlitestore.Collection, rep *CheckReport, problem func(string, ...any)) error {
	keys := make(map[string]vector.ID, c.Len())
	rows := 0
	err := c.ForEachPayload(ctx, func(it sqlitestore.Item) error {
		rows++
		r := row{id: it.ID, key: it.Key, text: it.Text, created: nanosOf(it.Created), updated: nanosOf(it.Updated)}
		if f := r.fault(); f != "" {
			problem("row %d (%q) %s", it.ID, it.Key, f)
		} else if prev, dup := keys[it.Key]; dup {
			problem("rows %d and %d have the same id %q", prev, it.ID, it.Key)
		} else {
			keys[it.Key] = it.ID
		}
		if _, err := decodeMetadata(it.Metadata); err != nil {
			problem("row %d (%q): %v", it.ID, it.Key, err)
		}
		if _, err := c.Get(it.ID); err != nil {
			problem("row %d (%q) has no vector loaded: %v", it.ID, it.Key, err)
		}
		return ctx.Err()
	})
	if err != nil {
		if errors.Is(err, vector.ErrCorrupt) {
			problem("%v", err)
			return nil
		}
		return err
	}
	rep.Items += rows
	if rows != c.Len() {
		problem("%d rows but %d vectors loaded", rows, c.Len())
	}
	return checkHistory(ctx, c, rep, problem)
}

// checkHistory checks the states c's history keeps by the rules their
// reader applies, and counts them in rep. Its error is for a check that
// could not go on.
func checkHistory(ctx context.Context, c *sqlitestore.Collection, rep *CheckReport, problem func(string, ...any)) error {
	err := c.ForEachPast(ctx, func(p sqlitestore.Past) error {
		rep.Versions++
		if err := pastFault(p); err != nil {
			problem("%v", err)
		} else if _, err := decodeMetadata(p.Item.Metadata); p.Held() && err != nil {
			problem("history: row %d (%q): %v", p.Item.ID, p.Item.Key, err)
		}
		return ctx.Err()
	})
	if errors.Is(err, vector.ErrCorrupt) {
		problem("%v", err)
		return nil
	}
	return err
}

// checkCollection adds what is wrong with one collection to rep. Its
// error is for a check that could not go on (a cancelled ctx, say).
func checkCollection(ctx context.Context, sdb *sqlitestore.DB, in sqlitestore.CollectionInfo, rep *CheckReport) error {
	rep.Collections++
	n := 0
	problem := func(format string, a ...any) {
		if n++; n <= maxProblems {
			rep.Problems = append(rep.Problems, fmt.Sprintf("collection %q: ", in.Name)+fmt.Sprintf(format, a...))
		}
	}
	defer func() {
		if n > maxProblems {
			rep.Problems = append(rep.Problems, fmt.Sprintf("collection %q: %d more problems", in.Name, n-maxProblems))
		}
	}()
	cfg, err := decodeSettings(in.Dim, in.Metric, in.Settings)
	if err != nil {
		problem("%v", err)
		return nil
	}
	c, err := sdb.Collection(ctx, in.Name)
	if err != nil {
		if errors.Is(err, vector.ErrCorrupt) {
			problem("%v", err)
			return nil
		}
		return err
	}
	if err := checkRows(ctx, c, rep, problem); err != nil {
		return err
	}
	names, err := c.Tenants(ctx)
	if err != nil {
		if errors.Is(err, vector.ErrCorrupt) {
			problem("tenants: %v", err)
			return nil
		}
		return err
	}
	for _, name := range names {
		rep.Tenants++
		tenantProblem := func(format string, a ...any) {
			problem("tenant %q: %s", name, fmt.Sprintf(format, a...))
		}
		t, err := c.Tenant(ctx, name)
		if errors.Is(err, vector.ErrCorrupt) || errors.Is(err, vector.ErrNotFound) {
			// Not found though just listed: its name is stored as no
			// text (a byte changed its type), say.
			tenantProblem("%v", err)
			continue
		}
		if err == nil {
			err = checkRows(ctx, t, rep, tenantProblem)
			if err == nil {
				err = checkSavedGraph(ctx, t, cfg, rep, tenantProblem)
			}
			if uerr := t.Unload(); err == nil {
				err = uerr
			}
		}
		if err != nil {
			return err
		}
	}
	return checkSavedGraph(ctx, c, cfg, rep, problem)
}

// checkSavedGraph checks the graph saved for c, a collection or a tenant,
// if it is current, over c's rows, and counts it in rep. Its error is for
// a check that could not go on.
func checkSavedGraph(ctx context.Context, c *sqlitestore.Collection, cfg CollectionConfig, rep *CheckReport, problem func(string, ...any)) error {
	// Without the recall target, which is not in the saved graph: a
	// graph loaded with one starts a calibration, which a check has no
	// use for, and which would go on reading a tenant once it is unloaded.
	opts := cfg.HNSW
	opts.TargetRecall, opts.TargetK = 0, 0
	ix, err := hnsw.New(c, &opts)
	if err != nil {
		problem("HNSW options: %v", err)
		return nil
	}
	err = c.LoadIndex(ctx, graphName, ix)
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	switch state := graphState(err); state {
	case GraphCurrent:
		rep.Graphs++
		if err := ix.Verify(); err != nil {
			problem("saved graph: %v", err)
		}
	case GraphDamaged:
		problem("saved graph: %v", err)
	}
	return nil
}
