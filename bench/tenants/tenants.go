package main

import (
	"context"

	"github.com/cairndb/cairn"
)

// tenants keeps every tenant as a tenant of the collection "memories".
type tenants struct{ c *cairn.Collection }

func openTenants(ctx context.Context, db *cairn.DB, dim int) (space, error) {
	c, err := db.GetOrCreateCollection(ctx, "memories", cfg(dim))
	if err != nil {
		return nil, err
	}
	return tenants{c}, nil
}

func (t tenants) create(ctx context.Context, name string) (cairn.MemoryCollection, error) {
	return t.c.CreateTenant(ctx, name)
}

func (t tenants) get(ctx context.Context, name string) (cairn.MemoryCollection, error) {
	return t.c.Tenant(ctx, name)
}

func (t tenants) remove(ctx context.Context, name string) error { return t.c.DeleteTenant(ctx, name) }
